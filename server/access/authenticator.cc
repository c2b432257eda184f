#include "server/access/authenticator.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace wm::access {
namespace {

constexpr char kAuthenticatedGroup[] = "system:authenticated";

Identity WithAuthenticatedGroup(Identity identity) {
  if (std::find(identity.groups.begin(), identity.groups.end(), kAuthenticatedGroup) ==
      identity.groups.end()) {
    identity.groups.push_back(kAuthenticatedGroup);
  }
  return identity;
}

}  // namespace

std::optional<absl::StatusOr<Identity>> Authenticator::WithoutToken(
    const CallerCredentials& credentials) const {
  if (options_.client_certificates && credentials.certificate &&
      !credentials.certificate->common_name.empty()) {
    Identity identity;
    identity.user = credentials.certificate->common_name;
    identity.groups = credentials.certificate->organizations;
    return WithAuthenticatedGroup(std::move(identity));
  }
  if (credentials.bearer_token.empty()) {
    return absl::UnauthenticatedError(
        options_.tokens != nullptr
            ? "no credentials: send a bearer token (authorization: Bearer <token>)"
              " or a client certificate"
            : "no credentials: this daemon accepts client certificates only");
  }
  if (options_.tokens == nullptr) {
    return absl::UnauthenticatedError(
        "bearer tokens are not accepted here: use a client certificate");
  }
  return std::nullopt;
}

absl::StatusOr<Identity> Authenticator::Authenticate(const CallerCredentials& credentials) const {
  if (std::optional<absl::StatusOr<Identity>> answer = WithoutToken(credentials)) return *answer;
  absl::StatusOr<Identity> identity = options_.tokens->Review(credentials.bearer_token);
  if (!identity.ok()) return identity.status();
  return WithAuthenticatedGroup(*std::move(identity));
}

std::optional<absl::StatusOr<Identity>> Authenticator::AuthenticateWithoutBlocking(
    const CallerCredentials& credentials) const {
  if (std::optional<absl::StatusOr<Identity>> answer = WithoutToken(credentials)) return answer;
  std::optional<absl::StatusOr<Identity>> cached =
      options_.tokens->Cached(credentials.bearer_token);
  if (!cached) return std::nullopt;
  if (!cached->ok()) return cached;
  return WithAuthenticatedGroup(**std::move(cached));
}

absl::StatusOr<std::string> ParseBearerToken(absl::string_view authorization) {
  authorization = absl::StripAsciiWhitespace(authorization);
  constexpr absl::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !absl::StartsWithIgnoreCase(authorization, kScheme)) {
    return absl::InvalidArgumentError("authorization metadata: expected \"Bearer <token>\"");
  }
  absl::string_view token = absl::StripLeadingAsciiWhitespace(authorization.substr(kScheme.size()));
  if (token.empty() || std::any_of(token.begin(), token.end(), [](char c) {
        return absl::ascii_isspace(static_cast<unsigned char>(c)) ||
               !absl::ascii_isprint(static_cast<unsigned char>(c));
      })) {
    return absl::InvalidArgumentError(
        "authorization metadata: the bearer token is empty or holds spaces or control "
        "characters");
  }
  return std::string(token);
}

}  // namespace wm::access
