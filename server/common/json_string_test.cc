// JSON string literals as gojq's encoder writes them (json_string.h).

#include "server/common/json_string.h"

#include <string>

#include "gtest/gtest.h"

namespace wm {
namespace {

std::string Quoted(std::string_view s) {
  std::string out;
  AppendJsonString(s, out);
  return out;
}

TEST(JsonStringTest, PlainTextIsOnlyQuoted) {
  EXPECT_EQ(Quoted(""), R"("")");
  EXPECT_EQ(Quoted("a b/c<>&'"), R"("a b/c<>&'")");
}

TEST(JsonStringTest, QuotesBackslashesAndControlCharactersAreEscaped) {
  EXPECT_EQ(Quoted("\"\\"), R"("\"\\")");
  EXPECT_EQ(Quoted("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(Quoted(std::string("\0\x01\x1f\x7f", 4)), R"("\u0000\u0001\u001f\u007f")");
}

TEST(JsonStringTest, ValidUtf8StaysAsItIs) {
  // Two-, three- and four-byte sequences, U+2028 among them.
  EXPECT_EQ(Quoted("é\u2028€\U0001F600"), "\"é\u2028€\U0001F600\"");
}

TEST(JsonStringTest, EachByteOfInvalidUtf8BecomesAReplacementCharacter) {
  EXPECT_EQ(Quoted("a\xff"
                   "b"),
            R"("a\ufffdb")");
  // An overlong '/', a surrogate, past U+10FFFF, a sequence cut short.
  EXPECT_EQ(Quoted("\xc0\xaf"), R"("\ufffd\ufffd")");
  EXPECT_EQ(Quoted("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");
  EXPECT_EQ(Quoted("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");
  EXPECT_EQ(Quoted("\xe2\x82"), R"("\ufffd\ufffd")");
}

TEST(JsonStringTest, Utf8SequenceLengthFollowsGo) {
  EXPECT_EQ(Utf8SequenceLength("é", 0), 2u);
  EXPECT_EQ(Utf8SequenceLength("x€", 1), 3u);
  EXPECT_EQ(Utf8SequenceLength("\U0010FFFF", 0), 4u);
  EXPECT_EQ(Utf8SequenceLength("a", 0), 0u);  // ASCII is no multi-byte sequence
  EXPECT_EQ(Utf8SequenceLength("\xe0\x80\x80", 0), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xed\xbf\xbf", 0), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xf4\x90\x80\x80", 0), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82", 0), 0u);
}

}  // namespace
}  // namespace wm
