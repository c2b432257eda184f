#ifndef WM_SERVER_EXPRESSIONS_NATIVE_TEST_SUPPORT_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_TEST_SUPPORT_H_

// Checks shared by the parser's tests and the catalog tests.

#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "server/expressions/native/parser.h"

namespace wm::expressions::native::testing {

// `source` parses, and printing its tree then parsing the text gives the
// same tree, whose text is again the same (ToString is a fixed point).
inline void ExpectRoundTrip(absl::string_view source) {
  absl::StatusOr<NodePtr> tree = Parse(source);
  ASSERT_TRUE(tree.ok()) << tree.status() << "\nsource: " << source;
  std::string printed = ToString(**tree);
  // The canonical text adds parentheses, hence parser levels, not tree
  // depth.
  ParseLimits roomy;
  roomy.max_depth = 4 * ParseLimits().max_depth;
  roomy.max_source_bytes = 16 * (source.size() + 64);
  absl::StatusOr<NodePtr> reparsed = Parse(printed, roomy);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\nsource: " << source
                             << "\nprinted: " << printed;
  EXPECT_TRUE(SameTree(**tree, **reparsed)) << "source: " << source << "\nprinted: " << printed
                                            << "\nreprinted: " << ToString(**reparsed);
  EXPECT_EQ(ToString(**reparsed), printed) << "source: " << source;
}

}  // namespace wm::expressions::native::testing

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_TEST_SUPPORT_H_
