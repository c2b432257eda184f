#include "server/common/json_size.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm {
namespace {

using ::testing::ElementsAre;

// Prices each value at 1 and each member at 100, and records what it saw.
struct Recording {
  mutable std::vector<std::string> seen;
  size_t Value(const Json& value) const {
    seen.push_back(value.type_name());
    return 1;
  }
  size_t Member(const std::string& key) const {
    seen.push_back("key " + key);
    return 100;
  }
};

TEST(JsonTreeCostTest, PricesEveryValueAndEveryMemberOnce) {
  Recording model;
  Json tree = Json::parse(R"({"b": [1, "x", null], "a": {"c": true}})");
  // Values: the root, the array and its three elements, the inner object
  // and its boolean (7); members: a, b, c (3).
  EXPECT_EQ(JsonTreeCost(tree, model), 7u + 300u);
  EXPECT_THAT(model.seen, ElementsAre("object", "key a", "object", "key c", "boolean", "key b",
                                      "array", "number", "string", "null"));
}

TEST(JsonTreeCostTest, AScalarIsItsOwnValue) {
  Recording model;
  EXPECT_EQ(JsonTreeCost(Json("text"), model), 1u);
  EXPECT_THAT(model.seen, ElementsAre("string"));
}

}  // namespace
}  // namespace wm
