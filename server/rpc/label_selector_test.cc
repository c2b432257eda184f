#include "server/rpc/label_selector.h"

#include <map>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace wm::rpc {
namespace {

using Labels = std::map<std::string, std::string>;

LabelSelector MustParse(absl::string_view text) {
  auto selector = LabelSelector::Parse(text);
  EXPECT_TRUE(selector.ok()) << text << ": " << selector.status();
  return selector.ok() ? *std::move(selector) : LabelSelector();
}

TEST(LabelSelectorTest, EmptySelectorMatchesEverything) {
  for (absl::string_view text : {"", "   "}) {
    LabelSelector s = MustParse(text);
    EXPECT_TRUE(s.empty()) << "\"" << text << "\"";
    EXPECT_TRUE(s.Matches({}));
    EXPECT_TRUE(s.Matches({{"app", "x"}}));
  }
}

TEST(LabelSelectorTest, Equality) {
  for (absl::string_view text : {"app=trainer", "app==trainer", " app = trainer "}) {
    LabelSelector s = MustParse(text);
    EXPECT_FALSE(s.empty());
    EXPECT_TRUE(s.Matches({{"app", "trainer"}})) << text;
    EXPECT_TRUE(s.Matches({{"app", "trainer"}, {"team", "a"}})) << text;
    EXPECT_FALSE(s.Matches({{"app", "server"}})) << text;
    EXPECT_FALSE(s.Matches({})) << text;
    EXPECT_FALSE(s.Matches({{"other", "trainer"}})) << text;
  }
}

TEST(LabelSelectorTest, Inequality) {
  LabelSelector s = MustParse("app!=trainer");
  EXPECT_FALSE(s.Matches({{"app", "trainer"}}));
  EXPECT_TRUE(s.Matches({{"app", "server"}}));
  // As in Kubernetes, != also matches objects without the label.
  EXPECT_TRUE(s.Matches({}));
}

TEST(LabelSelectorTest, In) {
  LabelSelector s = MustParse("env in (prod, staging)");
  EXPECT_TRUE(s.Matches({{"env", "prod"}}));
  EXPECT_TRUE(s.Matches({{"env", "staging"}}));
  EXPECT_FALSE(s.Matches({{"env", "dev"}}));
  EXPECT_FALSE(s.Matches({}));
}

TEST(LabelSelectorTest, NotIn) {
  LabelSelector s = MustParse("env notin (prod,staging)");
  EXPECT_FALSE(s.Matches({{"env", "prod"}}));
  EXPECT_FALSE(s.Matches({{"env", "staging"}}));
  EXPECT_TRUE(s.Matches({{"env", "dev"}}));
  EXPECT_TRUE(s.Matches({}));
}

TEST(LabelSelectorTest, Exists) {
  LabelSelector s = MustParse("kai.scheduler/queue");
  EXPECT_TRUE(s.Matches({{"kai.scheduler/queue", "team-a"}}));
  EXPECT_TRUE(s.Matches({{"kai.scheduler/queue", ""}}));
  EXPECT_FALSE(s.Matches({{"queue", "team-a"}}));
  EXPECT_FALSE(s.Matches({}));
}

TEST(LabelSelectorTest, DoesNotExist) {
  LabelSelector s = MustParse("!kai.scheduler/queue");
  EXPECT_FALSE(s.Matches({{"kai.scheduler/queue", "team-a"}}));
  EXPECT_TRUE(s.Matches({{"queue", "team-a"}}));
  EXPECT_TRUE(s.Matches({}));
}

TEST(LabelSelectorTest, RequirementsAreAnded) {
  LabelSelector s = MustParse("app=trainer,env in (prod,staging),!canary,team");
  EXPECT_TRUE(s.Matches({{"app", "trainer"}, {"env", "prod"}, {"team", "a"}}));
  EXPECT_FALSE(s.Matches({{"app", "trainer"}, {"env", "prod"}}));  // no team
  EXPECT_FALSE(s.Matches({{"app", "trainer"}, {"env", "dev"}, {"team", "a"}}));
  EXPECT_FALSE(s.Matches({{"app", "trainer"}, {"env", "prod"}, {"team", "a"}, {"canary", "true"}}));
  EXPECT_FALSE(s.Matches({{"app", "server"}, {"env", "prod"}, {"team", "a"}}));
}

TEST(LabelSelectorTest, Errors) {
  for (absl::string_view text :
       {"a in (b", "=x", "a b c", "a notin b,c)", "a in (b,c", "a=b,", "a=b=c", "a foo (b)"}) {
    auto s = LabelSelector::Parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_TRUE(absl::StrContains(s.status().message(), "label_selector"))
        << text << ": " << s.status();
  }
  auto missing_paren = LabelSelector::Parse("a in (b");
  EXPECT_EQ(missing_paren.status().message(), "label_selector: \"a in (b\": missing )");
  auto no_key = LabelSelector::Parse("=x");
  EXPECT_EQ(no_key.status().message(), "label_selector: \"=x\": invalid key");
  auto spaces = LabelSelector::Parse("a b c");
  EXPECT_EQ(spaces.status().message(), "label_selector: \"a b c\": invalid key");
}

}  // namespace
}  // namespace wm::rpc
