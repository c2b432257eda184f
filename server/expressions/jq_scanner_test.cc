#include "server/expressions/jq_scanner.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::expressions {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(JqScannerTest, TokenizesFieldsStringsAndInterpolation) {
  auto tokens = ScanJq(R"(.a["b"] | "x\(.c // 1)y" | $v)");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  std::vector<std::string> texts;
  for (const auto& t : *tokens) texts.push_back(t.text);
  EXPECT_THAT(texts, ElementsAre(".a", "[", "\"b\"", "]", "|", "\"x\\(.c // 1)y\"", ".c", "//", "1",
                                 "|", "$v"));
}

TEST(JqScannerTest, RejectsUnterminatedString) {
  EXPECT_FALSE(ScanJq("\"abc").ok());
  EXPECT_FALSE(ScanJq("\"a\\(.b\"").ok());
}

TEST(JqScannerTest, ReadOnlyBlacklist) {
  EXPECT_THAT(FindForbiddenConstructs("del(.a)"),
              ElementsAre(HasSubstr("del function is not allowed")));
  EXPECT_THAT(FindForbiddenConstructs(".."), ElementsAre(HasSubstr("recursive descent")));
  EXPECT_THAT(FindForbiddenConstructs(".a..b"), SizeIs(1));
  for (const char* op : {"=", "|=", "+=", "-=", "*=", "/=", "%=", "//="}) {
    EXPECT_THAT(FindForbiddenConstructs(std::string(".a ") + op + " 1"),
                ElementsAre(HasSubstr(std::string("assignment operator ") + op)))
        << op;
  }
  for (const char* f : {"range(3)", "[paths]", "recurse", "walk(.)", "repeat(.)"}) {
    EXPECT_THAT(FindForbiddenConstructs(f), SizeIs(1)) << f;
  }
  // Also inside def bodies and string interpolations.
  EXPECT_THAT(FindForbiddenConstructs("def f: del(.x); f"), SizeIs(1));
  EXPECT_THAT(FindForbiddenConstructs("\"\\(recurse)\""), SizeIs(1));
}

TEST(JqScannerTest, BlocksEnvironmentAndInputs) {
  for (const char* e : {"env", "$ENV.HOME", "input", "[inputs]", "input_filename", "$__loc__",
                        "debug", "stderr", "halt", "halt_error", "import \"a\" as a; .",
                        "include \"a\"; .", "input_line_number", "get_search_list"}) {
    EXPECT_THAT(FindForbiddenConstructs(e), SizeIs(1)) << e;
  }
}

TEST(JqScannerTest, NamesThatAreNotCallsPass) {
  EXPECT_THAT(FindForbiddenConstructs(".range"), IsEmpty());
  EXPECT_THAT(FindForbiddenConstructs("{range: 1, del: 2}"), IsEmpty());
  EXPECT_THAT(FindForbiddenConstructs(".a == \"del\""), IsEmpty());
  EXPECT_THAT(FindForbiddenConstructs(".a == 1 and .b != 2 // 3"), IsEmpty());
  EXPECT_THAT(FindForbiddenConstructs("[.x[]?] | length >= 1"), IsEmpty());
  EXPECT_THAT(FindForbiddenConstructs(".env"), IsEmpty());
}

TEST(JqScannerTest, RewritesElselessIf) {
  EXPECT_EQ(RewriteElselessIf("if . then 1 end"), "if . then 1 else . end");
  EXPECT_EQ(RewriteElselessIf("if . then 1 else 2 end"), "if . then 1 else 2 end");
  EXPECT_EQ(RewriteElselessIf("if a then b elif c then d end"),
            "if a then b elif c then d else . end");
  EXPECT_EQ(RewriteElselessIf("if a then (if b then 1 end) else 2 end"),
            "if a then (if b then 1 else . end) else 2 end");
  EXPECT_EQ(RewriteElselessIf("\"end\" | if a then 1 end"), "\"end\" | if a then 1 else . end");
}

}  // namespace
}  // namespace wm::expressions
