#include "server/common/yaml_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm {
namespace {

TEST(YamlJsonTest, TypesPlainScalarsByCoreSchema) {
  auto docs = ParseYamlDocuments(R"(
a: 1
b: "1"
c: true
d: 'true'
e: ~
f: 2.5
g: text
h: 0x10
i: [1, x]
j: {}
k: -7
)");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 1u);
  EXPECT_EQ((*docs)[0], Json::parse(R"({"a":1,"b":"1","c":true,"d":"true","e":null,"f":2.5,
    "g":"text","h":16,"i":[1,"x"],"j":{},"k":-7})"));
}

TEST(YamlJsonTest, MultiDocumentAndErrors) {
  auto docs = ParseYamlDocuments("a: 1\n---\n---\nb: 2\n");
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(docs->size(), 2u);
  auto bad = ParseYamlDocuments("a: [1, 2\nb: 3\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("line"));
}

TEST(YamlJsonTest, RoundTripsThroughToYaml) {
  Json value = Json::parse(R"({"s":"true","n":"12","x":[1,{"y":null}],"e":[],"o":{}})");
  auto back = ParseYamlDocuments(ToYaml(value));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)[0], value);
}

}  // namespace
}  // namespace wm
