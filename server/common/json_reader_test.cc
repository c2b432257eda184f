#include "server/common/json_reader.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace wm
