#include "server/access/authenticator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace wm::access {
namespace {

constexpr char kAuthenticatedGroup[] = "system:authenticated";

// `identity` with the group every authenticated user has (the apiserver's
// TokenReview answers include it; a certificate's subject does not).
SharedIdentity WithAuthenticatedGroup(SharedIdentity identity) {
  if (std::find(identity->groups.begin(), identity->groups.end(), kAuthenticatedGroup) !=
      identity->groups.end()) {
    return identity;
  }
  Identity with = *identity;
  with.groups.push_back(kAuthenticatedGroup);
  return std::make_shared<const Identity>(std::move(with));
}

// Whether every byte is printable ASCII but space (0x21 to 0x7e). A token
// is ~1 KB and comes with every call: eight bytes are checked at once.
bool AllVisibleAscii(absl::string_view text) {
  // Bit 7 of each byte of `x - 0x21..21` and `x + (0x7f - 0x7e)..` finds the
  // bytes below 0x21 and above 0x7e ("Bit Twiddling Hacks": hasless and
  // hasmore); exact for the question whether any byte is outside.
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, text.data() + i, 8);
    const uint64_t below = (x - kOnes * 0x21) & ~x & kHighs;
    const uint64_t above = ((x + kOnes * (127 - 0x7e)) | x) & kHighs;
    if ((below | above) != 0) return false;
  }
  for (; i < text.size(); ++i) {
    const unsigned char u = static_cast<unsigned char>(text[i]);
    if (u <= 0x20 || u >= 0x7f) return false;
  }
  return true;
}

}  // namespace

std::optional<absl::StatusOr<SharedIdentity>> Authenticator::WithoutToken(
    const CallerCredentials& credentials) const {
  if (options_.client_certificates && credentials.certificate &&
      !credentials.certificate->common_name.empty()) {
    Identity identity;
    identity.user = credentials.certificate->common_name;
    identity.groups = credentials.certificate->organizations;
    return WithAuthenticatedGroup(std::make_shared<const Identity>(std::move(identity)));
  }
  if (credentials.bearer_token.empty() && credentials.unix_peer && options_.unix_peers) {
    const CallerCredentials::UnixPeer& peer = *credentials.unix_peer;
    std::optional<SharedIdentity> known = options_.unix_peers->Find(peer.uid, peer.gid);
    if (!known) {
      return absl::UnauthenticatedError(absl::StrCat(
          "no credentials: the process at the other end of the Unix socket (uid ", peer.uid,
          ", gid ", peer.gid, ") is not in --unix-peer-identity, and sent no bearer token"));
    }
    return WithAuthenticatedGroup(*std::move(known));
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

absl::StatusOr<SharedIdentity> Authenticator::Authenticate(
    const CallerCredentials& credentials) const {
  if (std::optional<absl::StatusOr<SharedIdentity>> answer = WithoutToken(credentials)) {
    return *answer;
  }
  absl::StatusOr<SharedIdentity> identity = options_.tokens->Review(credentials.bearer_token);
  if (!identity.ok()) return identity.status();
  return WithAuthenticatedGroup(*std::move(identity));
}

std::optional<absl::StatusOr<SharedIdentity>> Authenticator::AuthenticateWithoutBlocking(
    const CallerCredentials& credentials) const {
  if (std::optional<absl::StatusOr<SharedIdentity>> answer = WithoutToken(credentials)) {
    return answer;
  }
  std::optional<absl::StatusOr<SharedIdentity>> cached =
      options_.tokens->Cached(credentials.bearer_token);
  if (!cached) return std::nullopt;
  if (!cached->ok()) return cached;
  return WithAuthenticatedGroup(**std::move(cached));
}

absl::StatusOr<absl::string_view> ParseBearerToken(absl::string_view authorization) {
  authorization = absl::StripAsciiWhitespace(authorization);
  constexpr absl::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !absl::StartsWithIgnoreCase(authorization, kScheme)) {
    return absl::InvalidArgumentError("authorization metadata: expected \"Bearer <token>\"");
  }
  absl::string_view token = absl::StripLeadingAsciiWhitespace(authorization.substr(kScheme.size()));
  if (token.empty() || !AllVisibleAscii(token)) {
    return absl::InvalidArgumentError(
        "authorization metadata: the bearer token is empty or holds spaces or control "
        "characters");
  }
  return token;
}

}  // namespace wm::access
