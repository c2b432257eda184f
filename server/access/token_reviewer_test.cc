// TokenReviewer against a scripted apiserver: what it asks, what it makes of
// the answers, and what it remembers. The real apiserver's answers are
// tested in integration_tests/kube/access_test.cc.
#include "server/access/token_reviewer.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/access/testing/review_server.h"
#include "server/common/json.h"
#include "server/common/testing/fake_clock.h"

namespace wm::access {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::wm::testing::FakeClock;

// An apiserver that knows one valid token, "good-token" (until revoked),
// valid for audience "workloadmap" and the apiserver's own; "down" answers
// 503.
class TokenReviewServer : public testing::ReviewServer {
 public:
  TokenReviewServer()
      : ReviewServer([this](const std::string& path, const Json& review, int* http_status) {
          return Decide(path, review, http_status);
        }) {}
  void Revoke() { revoked_ = true; }

 private:
  Json Decide(const std::string& path, const Json& review, int* http_status) {
    if (path != "/apis/authentication.k8s.io/v1/tokenreviews") {
      *http_status = 404;
      return Json::object();
    }
    std::string token = review["spec"]["token"];
    if (token == "down") {
      *http_status = 503;
      return {{"kind", "Status"}, {"message", "etcd is unhappy"}};
    }
    if (token != "good-token" || revoked_) {
      return {{"authenticated", false}, {"error", "invalid bearer token"}};
    }
    return {{"authenticated", true},
            {"user",
             {{"username", "system:serviceaccount:team-a:reader"},
              {"uid", "uid-1"},
              {"groups", {"system:serviceaccounts", "system:serviceaccounts:team-a"}},
              {"extra", {{"authentication.kubernetes.io/pod-name", {"p-1"}}}}}},
            {"audiences", {"workloadmap", "https://kubernetes.default.svc"}}};
  }

  std::atomic<bool> revoked_{false};
};

TEST(TokenReviewerTest, AValidTokenNamesItsUserAndIsRememberedByItsHash) {
  TokenReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  FakeClock clock;
  TokenReviewer reviewer(client, {.clock = clock.AsClock()});
  EXPECT_EQ(reviewer.Cached("good-token"), std::nullopt);

  absl::StatusOr<SharedIdentity> identity = reviewer.Review("good-token");
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ((*identity)->user, "system:serviceaccount:team-a:reader");
  EXPECT_EQ((*identity)->uid, "uid-1");
  EXPECT_THAT((*identity)->groups,
              ElementsAre("system:serviceaccounts", "system:serviceaccounts:team-a"));
  EXPECT_THAT((*identity)->extra.at("authentication.kubernetes.io/pod-name"), ElementsAre("p-1"));
  Json review = apiserver.last_review();
  EXPECT_EQ(review["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ(review["kind"], "TokenReview");
  EXPECT_EQ(review["spec"]["token"], "good-token");
  EXPECT_FALSE(review["spec"].contains("audiences"));

  // Within the ttl: from the cache, without asking.
  clock.Advance(absl::Seconds(119));
  ASSERT_TRUE(reviewer.Review("good-token").ok());
  ASSERT_TRUE(reviewer.Cached("good-token").has_value());
  EXPECT_EQ(apiserver.reviews(), 1);
  // After it, asked again: a revoked token is rejected.
  apiserver.Revoke();
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(reviewer.Cached("good-token"), std::nullopt);
  EXPECT_TRUE(absl::IsUnauthenticated(reviewer.Review("good-token").status()));
  EXPECT_EQ(apiserver.reviews(), 2);
  EXPECT_EQ(reviewer.cache_stats().size, 1u);
}

TEST(TokenReviewerTest, ARejectedTokenIsUnauthenticatedWithoutTheTokenInTheMessage) {
  TokenReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  FakeClock clock;
  TokenReviewer reviewer(client, {.invalid_ttl = absl::Seconds(10), .clock = clock.AsClock()});
  absl::StatusOr<SharedIdentity> identity = reviewer.Review("forged-secret-value");
  EXPECT_TRUE(absl::IsUnauthenticated(identity.status())) << identity.status();
  EXPECT_THAT(identity.status().message(), HasSubstr("invalid bearer token"));
  EXPECT_THAT(identity.status().message(), Not(HasSubstr("forged-secret-value")));
  // Rejections are remembered for invalid_ttl only.
  EXPECT_TRUE(absl::IsUnauthenticated(reviewer.Review("forged-secret-value").status()));
  EXPECT_EQ(apiserver.reviews(), 1);
  clock.Advance(absl::Seconds(10));
  EXPECT_TRUE(absl::IsUnauthenticated(reviewer.Review("forged-secret-value").status()));
  EXPECT_EQ(apiserver.reviews(), 2);
}

TEST(TokenReviewerTest, AudiencesAreAskedForAndATokenForNoneOfThemIsRejected) {
  TokenReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  TokenReviewer ours(client, {.audiences = {"workloadmap"}});
  ASSERT_TRUE(ours.Review("good-token").ok());
  EXPECT_EQ(apiserver.last_review()["spec"]["audiences"], Json({"workloadmap"}));

  TokenReviewer foreign(client, {.audiences = {"vault"}});
  absl::StatusOr<SharedIdentity> identity = foreign.Review("good-token");
  EXPECT_TRUE(absl::IsUnauthenticated(identity.status())) << identity.status();
  EXPECT_THAT(identity.status().message(), HasSubstr("not for this service (audiences vault)"));
}

TEST(TokenReviewerTest, AReviewThatCouldNotBeMadeIsUnavailableAndNotRemembered) {
  TokenReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  TokenReviewer reviewer(client, {});
  absl::StatusOr<SharedIdentity> identity = reviewer.Review("down");
  EXPECT_TRUE(absl::IsUnavailable(identity.status())) << identity.status();
  EXPECT_THAT(identity.status().message(), HasSubstr("503"));
  EXPECT_THAT(identity.status().message(), HasSubstr("etcd is unhappy"));
  EXPECT_EQ(reviewer.Cached("down"), std::nullopt);
  reviewer.Review("down").IgnoreError();
  EXPECT_EQ(apiserver.reviews(), 2);

  kube::ClusterConnection nowhere;
  nowhere.server = "http://127.0.0.1:1";  // nothing listens on port 1
  kube::ApiClient unreachable(nowhere);
  TokenReviewer cut_off(unreachable, {});
  EXPECT_TRUE(absl::IsUnavailable(cut_off.Review("good-token").status()));
}

// For TSan: callers on several threads review tokens at once through one
// reviewer (one cache, one client), valid and not, cached and not.
TEST(TokenReviewerTest, ConcurrentReviewsShareOneCache) {
  TokenReviewServer apiserver;
  kube::ApiClient client(apiserver.Connection());
  TokenReviewer reviewer(client, {.cache_entries = 4});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        std::string token = (i + t) % 2 ? "good-token" : absl::StrCat("bad-", (i + t) % 7);
        absl::StatusOr<SharedIdentity> identity = reviewer.Review(token);
        if (identity.ok() != (token == "good-token")) wrong.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(reviewer.cache_stats().size, 4u);
  EXPECT_LT(apiserver.reviews(), 100);  // some answers came from the cache
}

TEST(TokenReviewerTest, Sha256HexIsTheStandardDigest) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace wm::access
