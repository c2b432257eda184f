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
  EXPECT_EQ(no_key.status().message(),
            "label_selector: \"=x\": key \"\": name part must be non-empty");
  auto spaces = LabelSelector::Parse("a b c");
  EXPECT_TRUE(absl::StartsWith(spaces.status().message(),
                               "label_selector: \"a b c\": key \"a b c\": name part must be "
                               "alphanumeric characters"))
      << spaces.status();
}

// Keys and values follow labels.Parse: qualified-name keys (a name of at
// most 63 characters, a prefix of at most 253), label values.
TEST(LabelSelectorTest, KeysAndValuesAreCheckedAsKubernetesDoes) {
  MustParse(std::string(253, 'p') + "/" + std::string(63, 'n') + "=" + std::string(63, 'v'));
  MustParse("example.com/Team_1.x in (a-b, C.d, )");
  auto check = [](const std::string& text, absl::string_view expected) {
    auto s = LabelSelector::Parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(s.status().message(), expected)) << s.status();
    // The message quotes a short prefix of the caller's text, never all.
    EXPECT_LT(s.status().message().size(), 512u) << s.status();
  };
  check(std::string(64, 'k') + "=v", "name part must be no more than 63 characters (it has 64)");
  check(std::string(1 << 20, 'k').substr(0, kMaxLabelSelectorBytes - 1),
        "name part must be no more than 63 characters");
  check(std::string(254, 'p') + "/k", "prefix part must be no more than 253 characters");
  check("Example.com/k", "prefix part must be a lowercase RFC 1123 subdomain");
  check("a/b/c", "optional DNS subdomain prefix");
  check("app=" + std::string(64, 'v'), "value \"vvvv");
  check("app in (ok, -bad)", "value \"-bad\": must be empty or alphanumeric");
  check("app!=a:b", "value \"a:b\"");
}

TEST(LabelSelectorTest, LengthIsBounded) {
  std::string longest = "app in (" + std::string(kMaxLabelSelectorBytes - 9, ',') + ")";
  EXPECT_TRUE(LabelSelector::Parse(longest).ok());
  auto s = LabelSelector::Parse(std::string(200 << 10, 'a'));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "label_selector: 204800 bytes, more than the 16384 a selector may have");
}

}  // namespace
}  // namespace wm::rpc
