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

// Octal and hex integers too large for an int64 stay text (std::stoll
// threw out_of_range on them, which ended the process); the other
// core-schema forms keep their types.
TEST(YamlJsonTest, OversizedOctalAndHexStayText) {
  auto docs = ParseYamlDocuments(
      "a: 0o777777777777777777777777\nb: 0xffffffffffffffffffff\nc: 0o17\nd: 0x1F\n"
      "e: .5\nf: 1e3\ng: +3\nh: 1e\ni: 0o8\nj: .inf\n");
  ASSERT_TRUE(docs.ok()) << docs.status();
  EXPECT_EQ((*docs)[0], Json::parse(R"({"a":"0o777777777777777777777777",
    "b":"0xffffffffffffffffffff","c":15,"d":31,"e":0.5,"f":1000.0,"g":3,"h":"1e","i":"0o8",
    "j":".inf"})"));
}

TEST(YamlJsonTest, MultiDocumentAndErrors) {
  auto docs = ParseYamlDocuments("a: 1\n---\n---\nb: 2\n");
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(docs->size(), 2u);
  auto bad = ParseYamlDocuments("a: [1, 2\nb: 3\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), ::testing::HasSubstr("line"));
}

TEST(YamlJsonTest, NumberOutOfRangeIsAnError) {
  auto docs = ParseYamlDocuments("spec:\n  replicas: 1e400\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.status().message(), "YAML error at line 2, column 13: number out of range: 1e400");
  EXPECT_FALSE(ParseYamlDocuments("[-1e400]").ok());
  // Quoted, it is a string; and .inf stays the text it was.
  EXPECT_TRUE(ParseYamlDocuments("a: \"1e400\"\nb: .inf\n").ok());
}

TEST(YamlJsonTest, RejectsInvalidUtf8) {
  auto docs = ParseYamlDocuments("a: \"x\x8c\"\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_THAT(docs.status().message(), ::testing::HasSubstr("not valid UTF-8 at byte 5"));
  EXPECT_TRUE(ParseYamlDocuments("a: \"\xc3\xa9\xe2\x82\xac\"\n").ok());
}

TEST(YamlJsonTest, HostileInputEndsWithAnError) {
  // yaml-cpp 0.7 loops forever on a stray flow entry; libyaml reports it.
  for (const char* text : {",", ", #", "---\n,", "\"x\"\n,"}) {
    EXPECT_FALSE(ParseYamlDocuments(text).ok()) << text;
  }
  std::string deep(100000, '[');
  auto nested = ParseYamlDocuments(deep);
  ASSERT_FALSE(nested.ok());
  EXPECT_THAT(nested.status().message(), ::testing::HasSubstr("nesting deeper than"));
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    bomb += "]\n";
  }
  auto expanded = ParseYamlDocuments(bomb);
  ASSERT_FALSE(expanded.ok());
  EXPECT_THAT(expanded.status().message(),
              ::testing::HasSubstr("document 1 is too large (more than 1048576 nodes"));
  auto aliases = ParseYamlDocuments("a: &x {k: 1}\nb: *x\n");
  ASSERT_TRUE(aliases.ok()) << aliases.status();
  EXPECT_EQ((*aliases)[0]["b"]["k"], 1);
}

// The node bound is per document: a snapshot of many small manifests,
// together far more nodes than one document may have, reads fine.
TEST(YamlJsonTest, ManySmallDocumentsReadFine) {
  std::string doc = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {";
  for (int i = 0; i < 50; ++i) doc += "k" + std::to_string(i) + ": v, ";
  doc += "last: v}}\n";
  std::string stream;
  for (int i = 0; i < 10000; ++i) stream += doc;
  auto docs = ParseYamlDocuments(stream);
  ASSERT_TRUE(docs.ok()) << docs.status();
  EXPECT_EQ(docs->size(), 10000u);
  EXPECT_EQ(docs->back()["metadata"]["labels"]["k49"], "v");
}

// Aliases still cannot multiply memory across documents: what they add is
// bounded for the whole stream.
TEST(YamlJsonTest, AliasesAreBoundedOverTheStream) {
  // 3 levels of 10 copies, twice: each document expands to about 35,000
  // nodes, 30 of them to the stream's bound.
  std::string doc = "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'd'; ++c) {
    doc += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) doc += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    doc += "]\n";
  }
  doc += "e: [*d, *d]\n";
  EXPECT_TRUE(ParseYamlDocuments(doc).ok());
  std::string stream;
  for (int i = 0; i < 60; ++i) stream += doc;
  auto docs = ParseYamlDocuments(stream);
  ASSERT_FALSE(docs.ok());
  EXPECT_THAT(docs.status().message(),
              ::testing::HasSubstr("aliases in the stream expand to more than 1048576 nodes"));
}

TEST(YamlJsonTest, RoundTripsThroughToYaml) {
  Json value = Json::parse(R"({"s":"true","n":"12","x":[1,{"y":null}],"e":[],"o":{}})");
  auto back = ParseYamlDocuments(ToYaml(value));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)[0], value);
}

}  // namespace
}  // namespace wm
