#include "server/common/json_reader.h"

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/testing/typed_text.h"

namespace wm {
namespace {

using ::testing::HasSubstr;
using ::wm::testing::TypedText;

// What nlohmann's parser alone makes of `text`: the tree, or "error".
std::string NlohmannTyped(const std::string& text) {
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? "error" : TypedText(value);
}

std::string ParsedTyped(const std::string& text) {
  auto value = ParseJson(text, {.max_depth = 1000});
  return value.ok() ? TypedText(*value) : "error";
}

// {"spec":[[[...]]]} with `depth` levels in all.
std::string Nested(size_t depth) {
  std::string text = "{\"spec\":";
  text += std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
  return text;
}

TEST(JsonReaderTest, ParsesDocuments) {
  auto value = ParseJson(R"({"a": [1, -2, 18446744073709551615, 2.5, "x\u00e9", null, true]})");
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ((*value)["a"][2].get<uint64_t>(), 18446744073709551615u);
  EXPECT_EQ((*value)["a"][4], "x\xc3\xa9");
  EXPECT_TRUE(ParseJson("  3 ").ok());
}

TEST(JsonReaderTest, AcceptsTheBoundAndRefusesOneLevelMore) {
  EXPECT_TRUE(ParseJson(Nested(kMaxJsonDepth)).ok());
  auto deep = ParseJson(Nested(kMaxJsonDepth + 1));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), absl::StatusCode::kInvalidArgument);
  // The 101st bracket: 8 bytes of {"spec": then 99 more.
  EXPECT_EQ(deep.status().message(), "nesting deeper than 100 levels at byte 107");
}

TEST(JsonReaderTest, RefusesHostileDepthWithoutRecursing) {
  // 100,000 levels inside an object: parsed and dumped this used to crash.
  auto deep = ParseJson(Nested(100000));
  ASSERT_FALSE(deep.ok());
  EXPECT_THAT(deep.status().message(), HasSubstr("nesting deeper than 100 levels"));
}

TEST(JsonReaderTest, CountsBracketsInStringsAsText) {
  std::string text = "{\"k\":\"[[[{{{\\\"\"," + Nested(kMaxJsonDepth + 1).substr(1);
  auto deep = ParseJson(text);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(),
            absl::StrCat("nesting deeper than 100 levels at byte ", 16 + 7 + 99));
}

TEST(JsonReaderTest, HonoursAnotherLimit) {
  EXPECT_TRUE(ParseJson("[[1]]", {.max_depth = 2}).ok());
  EXPECT_EQ(ParseJson("[[[1]]]", {.max_depth = 2}).status().message(),
            "nesting deeper than 2 levels at byte 2");
}

TEST(JsonReaderTest, NumberOutOfRangeNamesTheNumber) {
  auto huge = ParseJson(R"({"replicas": 1e400})");
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(), "number out of range at byte 13: 1e400");
  EXPECT_FALSE(ParseJson("-1e400").ok());
}

TEST(JsonReaderTest, SyntaxErrorsGiveTheByteAndTheReason) {
  auto bad = ParseJson(R"({"a": x})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("invalid JSON at byte 6: syntax error"));
  EXPECT_THAT(bad.status().message(), HasSubstr("invalid literal"));
  EXPECT_THAT(ParseJson("").status().message(), HasSubstr("invalid JSON at byte 0"));
  EXPECT_THAT(ParseJson("{} {}").status().message(), HasSubstr("invalid JSON at byte 3"));
  EXPECT_THAT(ParseJson("\"\xff\"").status().message(), HasSubstr("invalid JSON at byte"));
}

// Texts up to 64 KiB go through simdjson first: what it builds must be
// what nlohmann's parser builds, number types included, and what it
// refuses must still be refused.
TEST(JsonReaderTest, TheFastPathBuildsWhatNlohmannBuilds) {
  const std::vector<std::string> edges = {"0",
                                          "-0",
                                          "-0.0",
                                          "1",
                                          "-1",
                                          "9223372036854775807",
                                          "9223372036854775808",
                                          "-9223372036854775808",
                                          "-9223372036854775809",
                                          "18446744073709551615",
                                          "18446744073709551616",
                                          "100000000000000000000000",
                                          "1.0",
                                          "1E2",
                                          "1e-400",
                                          "-1e-400",
                                          "4.9e-324",
                                          "1.7976931348623157e308",
                                          "0.1",
                                          "123456789012345678901234567890e-10",
                                          "[0e0]",
                                          R"({"a":1,"a":2})",
                                          R"({"a":{"b":[1,{"c":null}]},"a":{"d":true}})",
                                          R"("\u0000")",
                                          R"("\ud83d\ude00")",
                                          R"("\ud800")",
                                          R"("\udc00")",
                                          "\"\x7f\"",
                                          "\"a\x01\"",
                                          "\"\xff\"",
                                          "\"\xed\xa0\x80\"",
                                          "\xEF\xBB\xBF{}",
                                          "[1,2",
                                          "",
                                          " ",
                                          "nul",
                                          "[]  x",
                                          "01",
                                          "1.",
                                          ".5",
                                          "-",
                                          "[1,]",
                                          R"({"a":})",
                                          R"({"b":1,"a":2,"b":[3],"a":{}})",
                                          "{\"a\":1}\n",
                                          "\t[ true , false ]\r\n"};
  for (const std::string& text : edges) {
    EXPECT_EQ(ParsedTyped(text), NlohmannTyped(text)) << text;
  }
  // Random documents: every kind of value, keys and strings with escapes
  // and multi-byte characters, numbers at the edges of each type.
  std::mt19937_64 random(20261205);
  const std::vector<std::string> atoms = {
      "null", "true", "false", "0", "-0", "7", "-7", "4294967296", "9223372036854775807",
      "9223372036854775808", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
      "2.5", "-1e-300", "6.02e23", "1e308",
      // Strings, also used as keys.
      R"("")", R"("x")", R"("\u00e9\"\\\/\b\f\n\r\t")", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
      R"("\ud83d\ude00")"};
  constexpr size_t kFirstString = 17;
  std::function<std::string(int)> generate = [&](int depth) -> std::string {
    int pick = static_cast<int>(random() % 10);
    if (depth > 6 || pick < 5) return atoms[random() % atoms.size()];
    size_t n = random() % 5;
    std::string out = pick < 7 ? "[" : "{";
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out += random() % 2 ? "," : " , ";
      if (out[0] == '{') {
        absl::StrAppend(&out, atoms[kFirstString + random() % (atoms.size() - kFirstString)], ":");
      }
      out += generate(depth + 1);
    }
    return out + (out[0] == '[' ? "]" : "}");
  };
  for (int i = 0; i < 2000; ++i) {
    std::string text = generate(0);
    EXPECT_EQ(ParsedTyped(text), NlohmannTyped(text)) << text;
  }
}

TEST(JsonReaderTest, TheFastPathKeepsTheDepthBound) {
  // Below and above the fast path's 64 KiB, the same bound and the same
  // error.
  for (size_t filler : {size_t{0}, size_t{100} << 10}) {
    std::string pad = absl::StrCat(R"({"pad":")", std::string(filler, 'p'), R"(","spec":)");
    auto at_bound = ParseJson(pad + std::string(kMaxJsonDepth - 1, '[') +
                              std::string(kMaxJsonDepth - 1, ']') + "}");
    EXPECT_TRUE(at_bound.ok()) << filler << ": " << at_bound.status();
    auto deeper =
        ParseJson(pad + std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']') + "}");
    ASSERT_FALSE(deeper.ok()) << filler;
    EXPECT_EQ(deeper.status().message(),
              absl::StrCat("nesting deeper than 100 levels at byte ", pad.size() + 99));
  }
}

}  // namespace
}  // namespace wm
