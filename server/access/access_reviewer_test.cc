// AccessReviewer against a scripted apiserver: the review it sends, the
// decisions it draws, and how long it keeps them. The real apiserver's RBAC
// is tested in integration_tests/kube/access_test.cc.
#include "server/access/access_reviewer.h"

#include <atomic>
#include <mutex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/access/testing/review_server.h"
#include "server/common/json.h"
#include "server/common/testing/fake_clock.h"

namespace wm::access {
namespace {

using ::testing::HasSubstr;
using ::wm::testing::FakeClock;

// An apiserver whose RBAC lets "alice" get jobsets in team-a (until
// revoked), and nobody anything else; "mallory" is denied outright (an
// explicit deny).
class AccessReviewServer : public testing::ReviewServer {
 public:
  AccessReviewServer()
      : ReviewServer([this](const std::string& path, const Json& review, int* http_status) {
          return Decide(path, review, http_status);
        }) {}
  void RevokeAlice() { revoked_ = true; }

 private:
  Json Decide(const std::string& path, const Json& review, int* http_status) {
    if (path != "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
      *http_status = 404;
      return Json::object();
    }
    const Json& spec = review["spec"];
    const Json& attributes = spec["resourceAttributes"];
    if (spec["user"] == "mallory")
      return {{"allowed", false}, {"denied", true}, {"reason", "banned"}};
    bool allowed = !revoked_ && spec["user"] == "alice" && attributes["verb"] == "get" &&
                   attributes["resource"] == "jobsets" &&
                   attributes.value("namespace", "") == "team-a";
    if (!allowed) return {{"allowed", false}};
    return {{"allowed", true}, {"reason", "RBAC: allowed by RoleBinding \"read/team-a\""}};
  }

  std::atomic<bool> revoked_{false};
};

Identity Alice() { return {"alice", "uid-a", {"dev", "system:authenticated"}, {}}; }

ResourceAttributes GetJobSets(const std::string& namespace_) {
  return {"get", "jobset.x-k8s.io", "jobsets", namespace_, "demo"};
}

TEST(AccessReviewerTest, AsksForTheCallerAndTheRequestAndKeepsTheAnswer) {
  AccessReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  FakeClock clock;
  AccessReviewer reviewer(client, {.clock = clock.AsClock()});
  absl::StatusOr<Decision> decision = reviewer.Review(Alice(), GetJobSets("team-a"));
  ASSERT_TRUE(decision.ok()) << decision.status();
  EXPECT_TRUE(decision->allowed);
  EXPECT_THAT(decision->reason, HasSubstr("RoleBinding"));
  Json spec = apiserver.last_review()["spec"];
  EXPECT_EQ(spec["user"], "alice");
  EXPECT_EQ(spec["uid"], "uid-a");
  EXPECT_EQ(spec["groups"], Json({"dev", "system:authenticated"}));
  EXPECT_EQ(spec["resourceAttributes"], Json({{"verb", "get"},
                                              {"group", "jobset.x-k8s.io"},
                                              {"resource", "jobsets"},
                                              {"namespace", "team-a"},
                                              {"name", "demo"}}));

  // Another namespace is another question.
  decision = reviewer.Review(Alice(), GetJobSets("team-b"));
  ASSERT_TRUE(decision.ok());
  EXPECT_FALSE(decision->allowed);
  EXPECT_EQ(apiserver.reviews(), 2);

  // Allowed decisions live for allowed_ttl (5 min), denied ones for 30 s.
  apiserver.RevokeAlice();
  clock.Advance(absl::Seconds(30));
  EXPECT_TRUE(reviewer.Review(Alice(), GetJobSets("team-a"))->allowed);   // cached
  EXPECT_FALSE(reviewer.Review(Alice(), GetJobSets("team-b"))->allowed);  // asked again
  EXPECT_EQ(apiserver.reviews(), 3);
  clock.Advance(absl::Minutes(5));
  EXPECT_EQ(reviewer.Cached(Alice(), GetJobSets("team-a")), std::nullopt);
  EXPECT_FALSE(reviewer.Review(Alice(), GetJobSets("team-a"))->allowed);  // the revocation
  EXPECT_EQ(apiserver.reviews(), 4);
}

TEST(AccessReviewerTest, DifferentGroupsAreDifferentQuestions) {
  AccessReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  AccessReviewer reviewer(client, {});
  Identity alice = Alice();
  ASSERT_TRUE(reviewer.Review(alice, GetJobSets("team-a")).ok());
  Identity reordered = alice;
  std::swap(reordered.groups[0], reordered.groups[1]);
  ASSERT_TRUE(reviewer.Review(reordered, GetJobSets("team-a")).ok());  // the same groups
  EXPECT_EQ(apiserver.reviews(), 1);
  Identity more = alice;
  more.groups.push_back("admins");
  ASSERT_TRUE(reviewer.Review(more, GetJobSets("team-a")).ok());
  EXPECT_EQ(apiserver.reviews(), 2);
}

TEST(AccessReviewerTest, AnExplicitDenyIsADenial) {
  AccessReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  AccessReviewer reviewer(client, {});
  absl::StatusOr<Decision> decision =
      reviewer.Review({"mallory", "", {}, {}}, GetJobSets("team-a"));
  ASSERT_TRUE(decision.ok());
  EXPECT_FALSE(decision->allowed);
  EXPECT_EQ(decision->reason, "banned");
}

TEST(AccessReviewerTest, AReviewThatCouldNotBeMadeIsUnavailableAndNotRemembered) {
  kube::ClusterConnection nowhere;
  nowhere.server = "http://127.0.0.1:1";
  kube::ApiClient client(nowhere);
  AccessReviewer reviewer(client, {});
  EXPECT_TRUE(absl::IsUnavailable(reviewer.Review(Alice(), GetJobSets("team-a")).status()));
  EXPECT_EQ(reviewer.Cached(Alice(), GetJobSets("team-a")), std::nullopt);
}

TEST(AccessReviewerTest, CheckIsTheDecisionAsTheStatusOfACall) {
  AccessReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  AccessReviewer reviewer(client, {});
  EXPECT_EQ(reviewer.CheckCached(Alice(), GetJobSets("team-a")), std::nullopt);
  EXPECT_TRUE(reviewer.Check(Alice(), GetJobSets("team-a")).ok());
  EXPECT_EQ(reviewer.CheckCached(Alice(), GetJobSets("team-a")), absl::OkStatus());
  absl::Status denied = reviewer.Check(Alice(), GetJobSets("team-b"));
  EXPECT_TRUE(absl::IsPermissionDenied(denied)) << denied;
  EXPECT_THAT(std::string(denied.message()),
              ::testing::StartsWith("user \"alice\" may not get jobsets.jobset.x-k8s.io \"demo\" "
                                    "in namespace \"team-b\""));
  EXPECT_EQ(reviewer.CheckCached(Alice(), GetJobSets("team-b")), denied);
}

TEST(AccessReviewerTest, DescribeNamesVerbResourceAndNamespace) {
  EXPECT_EQ(GetJobSets("team-b").Describe(),
            "get jobsets.jobset.x-k8s.io \"demo\" in namespace \"team-b\"");
  EXPECT_EQ((ResourceAttributes{"list", "", "pods", "", ""}).Describe(),
            "list pods in every namespace");
}

TEST(AccessReviewerTest, AsksAboutANonResourceUrlAsRbacNamesIt) {
  testing::ReviewServer apiserver([](const std::string&, const Json& review, int*) -> Json {
    return {{"allowed", review["spec"]["nonResourceAttributes"]["path"] == "/metrics"}};
  });
  kube::ApiClient client(apiserver.Connection());
  AccessReviewer reviewer(client, {});
  ResourceAttributes metrics{.verb = "get", .path = "/metrics"};
  EXPECT_EQ(metrics.Describe(), "get \"/metrics\"");
  absl::StatusOr<Decision> decision = reviewer.Review(Alice(), metrics);
  ASSERT_TRUE(decision.ok()) << decision.status();
  EXPECT_TRUE(decision->allowed);
  EXPECT_EQ(apiserver.last_review()["spec"]["nonResourceAttributes"],
            Json({{"verb", "get"}, {"path", "/metrics"}}));
  EXPECT_FALSE(apiserver.last_review()["spec"].contains("resourceAttributes"));
  // Another path is another question.
  EXPECT_FALSE(reviewer.Review(Alice(), {.verb = "get", .path = "/debug/cache"})->allowed);
  EXPECT_EQ(apiserver.reviews(), 2);
}

}  // namespace
}  // namespace wm::access
