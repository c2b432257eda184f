#include "server/common/internal/sorted_object.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/common/json_reader.h"
#include "server/common/yaml_json.h"

namespace wm {
namespace {

using Object = Json::object_t;

std::vector<std::string> Keys(const Object& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object) keys.push_back(key);
  return keys;
}

// Keys made so that small objects are scanned and large ones searched by
// halves (the object switches at 16 members).
std::vector<std::string> ShuffledKeys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back(absl::StrCat("k", (i * 7919) % n));
  return keys;
}

TEST(SortedObjectTest, IteratesInByteOrderWhateverTheInsertionOrder) {
  Object object;
  for (const char* key : {"spec", "apiVersion", "status", "kind", "metadata", "Z", "\xc3\xa9"}) {
    object[key] = 1;
  }
  EXPECT_EQ(Keys(object), (std::vector<std::string>{"Z", "apiVersion", "kind", "metadata", "spec",
                                                    "status", "\xc3\xa9"}));
}

TEST(SortedObjectTest, FindsEveryMemberAndNoOtherInSmallAndLargeObjects) {
  for (int n : {0, 1, 5, 16, 17, 100, 1000}) {
    Object object;
    for (const std::string& key : ShuffledKeys(n)) object[key] = key;
    ASSERT_EQ(object.size(), static_cast<size_t>(n));
    const Json json(object);
    for (int i = 0; i < n; ++i) {
      const std::string key = absl::StrCat("k", i);
      auto it = object.find(absl::string_view(key));
      ASSERT_NE(it, object.end()) << key << " of " << n;
      EXPECT_EQ(it->second, key);
      const Json* member = FindMember(json, key);
      ASSERT_NE(member, nullptr) << key << " of " << n;
      EXPECT_EQ(*member, key);
    }
    EXPECT_EQ(FindMember(json, "k"), nullptr);
    EXPECT_EQ(object.find("k"), object.end());
    EXPECT_EQ(object.find(absl::StrCat("k", n)), object.end());
    EXPECT_EQ(object.count("missing"), 0u);
  }
}

TEST(SortedObjectTest, KeysOfTheSameLengthAreToldApart) {
  Object object;
  object["ab"] = 1;
  object["ba"] = 2;
  object["aa"] = 3;
  EXPECT_EQ(object.at("ab"), 1);
  EXPECT_EQ(object.at("ba"), 2);
  EXPECT_EQ(object.at("aa"), 3);
  EXPECT_EQ(object.find("bb"), object.end());
}

// Keys up to 16 bytes are compared word by word, longer ones by memcmp:
// at every length, a key that differs from a member in any one byte is not
// that member.
TEST(SortedObjectTest, KeysDifferingInAnyOneByteAreToldApartAtEveryLength) {
  for (size_t n = 0; n <= 20; ++n) {
    std::string key;
    for (size_t i = 0; i < n; ++i) key += static_cast<char>('a' + i);
    Object object;
    object[key] = 1;
    ASSERT_NE(object.find(key), object.end()) << "length " << n;
    for (size_t i = 0; i < n; ++i) {
      std::string other = key;
      other[i] = 'Z';
      EXPECT_EQ(object.find(other), object.end()) << "length " << n << ", byte " << i;
    }
  }
}

TEST(SortedObjectTest, EmplaceKeepsTheFirstValueAndAssignmentReplacesIt) {
  Object object;
  EXPECT_TRUE(object.emplace("a", 1).second);
  EXPECT_FALSE(object.emplace("a", 2).second);
  EXPECT_EQ(object.at("a"), 1);
  EXPECT_FALSE(object.insert_or_assign("a", 3).second);
  EXPECT_EQ(object.at("a"), 3);
  object["a"] = 4;
  EXPECT_EQ(object.at("a"), 4);
  EXPECT_EQ(object.size(), 1u);
}

TEST(SortedObjectTest, EraseByKeyAndByPositionKeepsTheOrder) {
  Object object;
  for (const std::string& key : ShuffledKeys(40)) object[key] = 0;
  EXPECT_EQ(object.erase("k7"), 1u);
  EXPECT_EQ(object.erase("k7"), 0u);
  object.erase(object.begin());
  EXPECT_EQ(object.size(), 38u);
  EXPECT_EQ(object.find("k7"), object.end());
  std::vector<std::string> keys = Keys(object);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST(SortedObjectTest, AssignUnsortedSortsAndKeepsTheLastOfARepeatedKey) {
  Object::Container members;
  members.emplace_back("b", 1);
  members.emplace_back("a", 2);
  members.emplace_back("b", 3);
  members.emplace_back("c", 4);
  members.emplace_back("b", 5);
  Object object;
  object.AssignUnsorted(std::move(members));
  EXPECT_EQ(Keys(object), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(object.at("b"), 5);
}

TEST(SortedObjectTest, MergedTakesBothAndCombinesWhatBothHave) {
  Object a;
  a["x"] = 1;
  a["y"] = 2;
  Object b;
  b["y"] = 20;
  b["z"] = 30;
  b["a"] = 0;
  Object merged = Object::Merged(
      a, b, [](Json& mine, const Json& theirs) { mine = mine.get<int>() + theirs.get<int>(); });
  EXPECT_EQ(Keys(merged), (std::vector<std::string>{"a", "x", "y", "z"}));
  EXPECT_EQ(merged.at("y"), 22);
  EXPECT_EQ(merged.at("x"), 1);
}

TEST(SortedObjectTest, ComparesAsTheMapDid) {
  EXPECT_EQ(Json::parse(R"({"a":1,"b":2})"), Json::parse(R"({"b":2,"a":1})"));
  EXPECT_NE(Json::parse(R"({"a":1})"), Json::parse(R"({"a":1,"b":2})"));
  EXPECT_LT(Json::parse(R"({"a":1})"), Json::parse(R"({"a":2})"));
  EXPECT_EQ(Json::parse(R"({"b":1,"a":{"d":1,"c":2}})").dump(), R"({"a":{"c":2,"d":1},"b":1})");
}

// Every reader builds an object of unsorted keys with one sort, not with
// one insertion in the middle per key, and keeps a repeated key's last
// value. The sizes are such that insertion in place (n^2 / 4 moves of a
// member: 2.5 * 10^11 for the JSON, 4 * 10^10 for the YAML) would not end
// within ctest's timeout.
TEST(SortedObjectTest, ReadersBuildLargeUnsortedObjectsAndKeepTheLastRepeatedValue) {
  constexpr int kJsonMembers = 1000000;
  constexpr int kYamlMembers = 400000;  // the reader allows 2^20 nodes
  std::string json = "{";
  std::string yaml;
  for (int i = kJsonMembers; i > 0; --i) absl::StrAppend(&json, "\"m", i, "\":", i, ",");
  for (int i = kYamlMembers; i > 0; --i) absl::StrAppend(&yaml, "m", i, ": ", i, "\n");
  absl::StrAppend(&json, "\"m5\":-5}");
  absl::StrAppend(&yaml, "m5: -5\n");
  ASSERT_GT(json.size(), 64u << 10);  // past the fast path: nlohmann's parser reads it
  absl::StatusOr<Json> from_json = ParseJson(json);
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  absl::StatusOr<std::vector<Json>> from_yaml = ParseYamlDocuments(yaml);
  ASSERT_TRUE(from_yaml.ok()) << from_yaml.status();
  ASSERT_EQ(from_yaml->size(), 1u);
  for (const auto& [object, members] :
       {std::pair{&*from_json, kJsonMembers}, std::pair{&(*from_yaml)[0], kYamlMembers}}) {
    ASSERT_EQ(object->size(), static_cast<size_t>(members));
    EXPECT_EQ(object->at("m5"), -5);
    EXPECT_EQ(object->at("m1"), 1);
    EXPECT_EQ(object->begin().key(), "m1");
  }
  // The fast path (simdjson) too, with a repeated key.
  absl::StatusOr<Json> small = ParseJson(R"({"b":1,"a":2,"b":3})");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->dump(), R"({"a":2,"b":3})");
}

}  // namespace
}  // namespace wm
