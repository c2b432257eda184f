// AccessReviewer against a scripted apiserver: the review it sends, the
// decisions it draws, and how long it keeps them. The real apiserver's RBAC
// is tested in integration_tests/kube/access_test.cc.
#include "server/access/access_reviewer.h"

#include <atomic>
#include <mutex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/common/testing/fake_clock.h"
#include "server/kube/testing/scripted_server.h"

namespace wm::access {
namespace {

using kube::testing::ScriptedServer;
using ::testing::HasSubstr;
using ::wm::testing::FakeClock;

// An apiserver whose RBAC lets "alice" get jobsets in team-a, and nobody
// anything else; "mallory" is denied outright (an explicit deny).
class AccessReviewServer {
 public:
  AccessReviewServer()
      : server_([this](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
          Serve(r, out);
        }) {}

  kube::ClusterConnection Connection() const {
    kube::ClusterConnection connection;
    connection.server = server_.url();
    return connection;
  }
  int reviews() const { return reviews_.load(); }
  Json last_review() const {
    std::lock_guard lock(mu_);
    return last_;
  }
  void RevokeAlice() { revoked_ = true; }

 private:
  void Serve(const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    ++reviews_;
    Json review = Json::parse(r.body);
    {
      std::lock_guard lock(mu_);
      last_ = review;
    }
    if (r.method != "POST" || r.path != "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
      out.Head(404);
      return;
    }
    const Json& spec = review["spec"];
    const Json& attributes = spec["resourceAttributes"];
    bool allowed = !revoked_ && spec["user"] == "alice" && attributes["verb"] == "get" &&
                   attributes["resource"] == "jobsets" &&
                   attributes.value("namespace", "") == "team-a";
    review["status"] = {{"allowed", allowed}};
    if (allowed) review["status"]["reason"] = "RBAC: allowed by RoleBinding \"read/team-a\"";
    if (spec["user"] == "mallory") {
      review["status"] = {{"allowed", false}, {"denied", true}, {"reason", "banned"}};
    }
    out.Head(201, {{"Content-Type", "application/json"}});
    out.Write(review.dump());
  }

  std::atomic<int> reviews_{0};
  std::atomic<bool> revoked_{false};
  mutable std::mutex mu_;
  Json last_;
  ScriptedServer server_;
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

TEST(AccessReviewerTest, DescribeNamesVerbResourceAndNamespace) {
  EXPECT_EQ(GetJobSets("team-b").Describe(),
            "get jobsets.jobset.x-k8s.io \"demo\" in namespace \"team-b\"");
  EXPECT_EQ((ResourceAttributes{"list", "", "pods", "", ""}).Describe(),
            "list pods in every namespace");
}

}  // namespace
}  // namespace wm::access
