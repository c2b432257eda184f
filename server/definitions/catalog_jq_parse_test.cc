// Every jq expression of our catalog, and of upstream's catalogs when
// $WM_CONFORMANCE_DIR holds them, parses with the native parser
// (server/expressions/native) and survives a print/parse round trip. The
// expressions are taken exactly as CompileDefinition hands them to an
// engine (testing::ExpressionsOfDefinitionsIn).

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/common/testing/optional_input.h"
#include "server/definitions/testing/definition_expressions.h"
#include "server/expressions/native/parser.h"
#include "server/expressions/native/test_support.h"

namespace wm::definitions {
namespace {

// Parses every expression of every definition in the *.yaml files of
// `dir`; returns how many there were.
size_t ExpectEveryExpressionParses(const std::string& dir) {
  auto definitions = testing::ExpressionsOfDefinitionsIn(dir);
  EXPECT_TRUE(definitions.ok()) << definitions.status();
  if (!definitions.ok()) return 0;
  EXPECT_FALSE(definitions->empty()) << dir;
  size_t count = 0;
  for (const testing::DefinitionExpressions& d : *definitions) {
    for (size_t i = 0; i < d.sources.size(); ++i) {
      absl::StatusOr<expressions::native::NodePtr> tree = expressions::native::Parse(d.sources[i]);
      EXPECT_TRUE(tree.ok()) << d.file << " " << d.field_paths[i] << ": " << tree.status() << "\n"
                             << d.sources[i];
      if (tree.ok()) expressions::native::testing::ExpectRoundTrip(d.sources[i]);
      ++count;
    }
  }
  return count;
}

TEST(CatalogJqParseTest, EveryExpressionOfOurCatalogParses) {
  size_t count = ExpectEveryExpressionParses(std::string(WM_SOURCE_DIR) + "/catalog");
  EXPECT_GT(count, 900u);  // 1002 when written
}

class UpstreamCatalogJqParseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(UpstreamCatalogJqParseTest, EveryExpressionParses) {
  WM_REQUIRE_CONFORMANCE_DIR(dir, GetParam(), "an upstream catalog");
  EXPECT_GT(ExpectEveryExpressionParses(dir), 500u);  // 593 and 591 when written
}

INSTANTIATE_TEST_SUITE_P(Conformance, UpstreamCatalogJqParseTest,
                         ::testing::Values("upstream-catalog", "upstream-catalog-older"));

}  // namespace
}  // namespace wm::definitions
