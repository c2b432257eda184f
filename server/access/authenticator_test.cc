#include "server/access/authenticator.h"

#include <string>

#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/access/testing/review_server.h"
#include "server/common/json.h"

namespace wm::access {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An apiserver that accepts the token "t" for user "bob".
Json AcceptsT(const std::string&, const Json& review, int*) {
  if (review["spec"]["token"] != "t") return {{"authenticated", false}};
  return {{"authenticated", true}, {"user", {{"username", "bob"}, {"groups", {"dev"}}}}};
}

TEST(AuthenticatorTest, AClientCertificateNamesUserAndGroupsAsTheApiserverDoes) {
  Authenticator authenticator({.client_certificates = true, .tokens = nullptr});
  CallerCredentials credentials;
  credentials.certificate = CallerCredentials::Certificate{"kai-scheduler", {"schedulers", "ops"}};
  absl::StatusOr<SharedIdentity> identity = authenticator.Authenticate(credentials);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ((*identity)->user, "kai-scheduler");
  EXPECT_THAT((*identity)->groups, ElementsAre("schedulers", "ops", "system:authenticated"));
  // Known without blocking.
  std::optional<absl::StatusOr<SharedIdentity>> now =
      authenticator.AuthenticateWithoutBlocking(credentials);
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(***now, **identity);
}

TEST(AuthenticatorTest, NoCredentialsAreUnauthenticatedSayingWhatToSend) {
  Authenticator certificates_only({.client_certificates = true, .tokens = nullptr});
  absl::StatusOr<SharedIdentity> identity = certificates_only.Authenticate({});
  EXPECT_TRUE(absl::IsUnauthenticated(identity.status()));
  EXPECT_THAT(identity.status().message(), HasSubstr("client certificates only"));

  CallerCredentials token_only;
  token_only.bearer_token = "t";
  identity = certificates_only.Authenticate(token_only);
  EXPECT_TRUE(absl::IsUnauthenticated(identity.status()));
  EXPECT_THAT(identity.status().message(), HasSubstr("bearer tokens are not accepted here"));

  // With certificates off, a certificate does not name the caller.
  Authenticator no_certificates({.client_certificates = false, .tokens = nullptr});
  CallerCredentials certificate;
  certificate.certificate = CallerCredentials::Certificate{"kai-scheduler", {}};
  EXPECT_TRUE(absl::IsUnauthenticated(no_certificates.Authenticate(certificate).status()));
}

TEST(AuthenticatorTest, ATokenIsReviewedOnceThenKnownWithoutBlocking) {
  testing::ReviewServer apiserver(AcceptsT);
  kube::ApiClient client(apiserver.Connection());
  TokenReviewer tokens(client, {});
  Authenticator authenticator({.client_certificates = true, .tokens = &tokens});
  CallerCredentials credentials;
  credentials.bearer_token = "t";
  EXPECT_EQ(authenticator.AuthenticateWithoutBlocking(credentials), std::nullopt);
  absl::StatusOr<SharedIdentity> identity = authenticator.Authenticate(credentials);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ((*identity)->user, "bob");
  EXPECT_THAT((*identity)->groups, ElementsAre("dev", "system:authenticated"));
  std::optional<absl::StatusOr<SharedIdentity>> cached =
      authenticator.AuthenticateWithoutBlocking(credentials);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(***cached, **identity);
  EXPECT_EQ(apiserver.reviews(), 1);

  credentials.bearer_token = "other";
  EXPECT_TRUE(absl::IsUnauthenticated(authenticator.Authenticate(credentials).status()));
  cached = authenticator.AuthenticateWithoutBlocking(credentials);
  ASSERT_TRUE(cached.has_value());  // the rejection is remembered too
  EXPECT_TRUE(absl::IsUnauthenticated(cached->status()));
}

TEST(AuthenticatorTest, ACertificateWinsOverAToken) {
  testing::ReviewServer apiserver(AcceptsT);
  kube::ApiClient client(apiserver.Connection());
  TokenReviewer tokens(client, {});
  Authenticator authenticator({.client_certificates = true, .tokens = &tokens});
  CallerCredentials both;
  both.bearer_token = "t";
  both.certificate = CallerCredentials::Certificate{"carol", {}};
  EXPECT_EQ((*authenticator.Authenticate(both))->user, "carol");
  EXPECT_EQ(apiserver.reviews(), 0);
}

TEST(ParseBearerTokenTest, TakesTheTokenOfABearerHeaderOnly) {
  EXPECT_EQ(ParseBearerToken("Bearer abc.def-ghi").value(), "abc.def-ghi");
  EXPECT_EQ(ParseBearerToken("bearer   abc").value(), "abc");
  EXPECT_EQ(ParseBearerToken(" BEARER abc ").value(), "abc");
  for (const char* bad : {"", "Bearer", "Bearer ", "Basic YWxpY2U6cGFzcw==", "Bearer a b",
                          "Bearer a\x01", "Token abc"}) {
    absl::StatusOr<absl::string_view> token = ParseBearerToken(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(token.status())) << bad;
    EXPECT_THAT(token.status().message(), ::testing::Not(HasSubstr("YWxp"))) << bad;
  }
}

// Long tokens are checked eight bytes at a time: every byte value, at every
// position of a word and of the tail, decides alone.
TEST(ParseBearerTokenTest, RefusesAnyInvisibleByteOfALongToken) {
  const std::string visible(37, 'x');  // four words and a tail of five
  for (int byte = 0; byte < 256; ++byte) {
    const bool allowed = byte >= 0x21 && byte <= 0x7e;
    for (size_t at = 0; at < visible.size(); ++at) {
      std::string token = visible;
      token[at] = static_cast<char>(byte);
      absl::StatusOr<absl::string_view> parsed = ParseBearerToken("Bearer " + token);
      const bool at_an_end = at == 0 || at == visible.size() - 1;
      if (allowed || (at_an_end && absl::ascii_isspace(static_cast<unsigned char>(byte)))) {
        // Spaces around the token are stripped, not part of it.
        EXPECT_TRUE(parsed.ok()) << "byte " << byte << " at " << at;
      } else {
        EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << "byte " << byte << " at " << at;
      }
    }
  }
}

}  // namespace
}  // namespace wm::access
