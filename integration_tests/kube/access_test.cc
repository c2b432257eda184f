// The access layer against the real apiserver of the testbed: real
// ServiceAccount tokens (TokenRequest) reviewed with TokenReview, and real
// RBAC decided through SubjectAccessReview, including a revocation.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration_tests/kube/testbed_fixture.h"
#include "server/access/access_reviewer.h"
#include "server/access/authenticator.h"
#include "server/access/token_reviewer.h"
#include "server/kube/testing/eventually.h"

namespace wm::access {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::wm::kube::testing::Eventually;
using wm::testing::Testbed;

constexpr absl::Duration kWait = absl::Seconds(30);

TEST(AccessIntegrationTest, ServiceAccountTokensAreReviewedByTheApiserver) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("access-authn");
  ASSERT_TRUE(tb.CreateServiceAccount(ns, "reader").ok());
  absl::StatusOr<std::string> ours = tb.ServiceAccountToken(ns, "reader", "workloadmap");
  absl::StatusOr<std::string> foreign = tb.ServiceAccountToken(ns, "reader", "vault");
  ASSERT_TRUE(ours.ok()) << ours.status();
  ASSERT_TRUE(foreign.ok()) << foreign.status();

  TokenReviewer tokens(tb.admin(), {.audiences = {"workloadmap"}, .valid_ttl = absl::Seconds(1)});
  Authenticator authenticator({.client_certificates = true, .tokens = &tokens});
  CallerCredentials credentials;
  credentials.bearer_token = *ours;
  absl::StatusOr<SharedIdentity> identity = authenticator.Authenticate(credentials);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ((*identity)->user, "system:serviceaccount:" + ns + ":reader");
  EXPECT_FALSE((*identity)->uid.empty());
  EXPECT_THAT((*identity)->groups, Contains("system:serviceaccounts:" + ns));
  EXPECT_THAT((*identity)->groups, Contains("system:authenticated"));

  // A token minted for another audience, and one that is no token at all.
  credentials.bearer_token = *foreign;
  EXPECT_TRUE(absl::IsUnauthenticated(authenticator.Authenticate(credentials).status()));
  credentials.bearer_token = "not-a-token";
  absl::StatusOr<SharedIdentity> rejected = authenticator.Authenticate(credentials);
  EXPECT_TRUE(absl::IsUnauthenticated(rejected.status())) << rejected.status();
  EXPECT_THAT(rejected.status().message(), HasSubstr("rejected"));

  // Deleting the ServiceAccount revokes its tokens, seen once the cached
  // answer has expired.
  ASSERT_TRUE(tb.Call("DELETE", "/api/v1/namespaces/" + ns + "/serviceaccounts/reader").ok());
  credentials.bearer_token = *ours;
  EXPECT_TRUE(Eventually(
      [&] { return absl::IsUnauthenticated(authenticator.Authenticate(credentials).status()); },
      kWait));
}

TEST(AccessIntegrationTest, RbacDecidesThroughSubjectAccessReviewAndRevocationsArrive) {
  Testbed& tb = Testbed::Get();
  std::string ns = tb.NewNamespace("access-authz");
  std::string other = tb.NewNamespace("access-other");
  ASSERT_TRUE(tb.BindRole(ns, "reader",
                          {{{"apiGroups", {"jobset.x-k8s.io"}},
                            {"resources", {"jobsets"}},
                            {"verbs", {"get", "list", "watch"}}}})
                  .ok());
  std::string user = "system:serviceaccount:" + ns + ":reader";

  // Short ttls both ways: a review made before RBAC's informers have the
  // new binding is a denial, which the default 30 s would keep past the
  // wait below (the test is of RBAC's decisions, not of the cache).
  AccessReviewer reviewer(tb.admin(),
                          {.allowed_ttl = absl::Seconds(1), .denied_ttl = absl::Seconds(1)});
  Identity reader{user, "", {"system:serviceaccounts", "system:authenticated"}, {}};
  Identity nobody{"system:serviceaccount:" + ns + ":nobody", "", {"system:authenticated"}, {}};
  ResourceAttributes get_here{"get", "jobset.x-k8s.io", "jobsets", ns, "demo"};
  ResourceAttributes get_there{"get", "jobset.x-k8s.io", "jobsets", other, "demo"};
  ResourceAttributes list_everywhere{"list", "jobset.x-k8s.io", "jobsets", "", ""};
  ResourceAttributes patch_here{"patch", "jobset.x-k8s.io", "jobsets", ns, "demo"};

  // RBAC's informers see a new binding within moments.
  EXPECT_TRUE(Eventually(
      [&] {
        absl::StatusOr<Decision> d = reviewer.Review(reader, get_here);
        return d.ok() && d->allowed;
      },
      kWait));
  for (const ResourceAttributes& denied : {get_there, list_everywhere, patch_here}) {
    absl::StatusOr<Decision> d = reviewer.Review(reader, denied);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_FALSE(d->allowed) << denied.Describe();
  }
  absl::StatusOr<Decision> d = reviewer.Review(nobody, get_here);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->allowed);

  // Revoked: denied once the allowed decision's ttl has passed.
  ASSERT_TRUE(tb.Call("DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns +
                                    "/rolebindings/reader")
                  .ok());
  EXPECT_TRUE(Eventually(
      [&] {
        absl::StatusOr<Decision> d = reviewer.Review(reader, get_here);
        return d.ok() && !d->allowed;
      },
      kWait));
}

}  // namespace
}  // namespace wm::access
