#include "server/common/user_text.h"

#include <string>

#include "gtest/gtest.h"

namespace wm {
namespace {

TEST(QuoteUserTextTest, ShortTextIsQuotedWhole) {
  EXPECT_EQ(QuoteUserText("team=ml"), "\"team=ml\"");
  EXPECT_EQ(QuoteUserText(""), "\"\"");
  EXPECT_EQ(QuoteUserText(std::string(kQuotedTextMaxBytes, 'a')),
            "\"" + std::string(kQuotedTextMaxBytes, 'a') + "\"");
}

TEST(QuoteUserTextTest, LongTextIsCutWithItsSize) {
  std::string quoted = QuoteUserText(std::string(200 << 10, 'k'));
  EXPECT_EQ(quoted, "\"" + std::string(kQuotedTextMaxBytes, 'k') + "\u2026\" (204800 bytes)");
}

TEST(QuoteUserTextTest, CutsAtAUtf8Boundary) {
  // "é" is two bytes: the 64-byte cut would fall inside the 32nd one.
  std::string text = "a";
  for (int i = 0; i < 40; ++i) text += "\u00e9";
  std::string quoted = QuoteUserText(text);
  std::string expected = "\"a";
  for (int i = 0; i < 31; ++i) expected += "\u00e9";
  EXPECT_EQ(quoted, expected + "\u2026\" (81 bytes)");
}

TEST(QuoteUserTextTest, EscapesQuotesAndControlCharacters) {
  EXPECT_EQ(QuoteUserText("a\"b\\c\nd"), "\"a\\\"b\\\\c\\x0ad\"");
}

}  // namespace
}  // namespace wm
