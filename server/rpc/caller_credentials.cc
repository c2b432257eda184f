#include "server/rpc/caller_credentials.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "server/access/authenticator.h"

namespace wm::rpc {
namespace {

std::string ToString(const grpc::string_ref& ref) { return std::string(ref.data(), ref.size()); }

}  // namespace

std::vector<std::string> OrganizationsOfSubject(absl::string_view subject) {
  // Attributes are separated by unescaped commas (or plus signs, within one
  // multi-valued RDN); a backslash escapes the next character.
  std::vector<std::string> organizations;
  std::string attribute;
  auto take = [&] {
    absl::string_view a = absl::StripAsciiWhitespace(attribute);
    if (absl::StartsWithIgnoreCase(a, "O=")) organizations.emplace_back(a.substr(2));
    attribute.clear();
  };
  for (size_t i = 0; i < subject.size(); ++i) {
    char c = subject[i];
    if (c == '\\' && i + 1 < subject.size()) {
      attribute.push_back(subject[++i]);
    } else if (c == ',' || c == '+') {
      take();
    } else {
      attribute.push_back(c);
    }
  }
  take();
  return organizations;
}

absl::StatusOr<access::CallerCredentials> ReadCallerCredentials(
    const grpc::ServerContextBase& context, const UnixPeerRegistry* unix_peers) {
  access::CallerCredentials credentials;
  auto [first, last] = context.client_metadata().equal_range("authorization");
  if (first != last) {
    if (std::next(first) != last) {
      return absl::UnauthenticatedError("authorization metadata appears more than once");
    }
    absl::StatusOr<absl::string_view> token =
        access::ParseBearerToken(absl::string_view(first->second.data(), first->second.size()));
    if (!token.ok()) return absl::UnauthenticatedError(token.status().message());
    credentials.bearer_token = std::string(*token);
  }
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    std::vector<grpc::string_ref> names = auth->FindPropertyValues("x509_common_name");
    std::vector<grpc::string_ref> subjects = auth->FindPropertyValues("x509_subject");
    if (!names.empty()) {
      access::CallerCredentials::Certificate certificate;
      certificate.common_name = ToString(names.front());
      if (!subjects.empty()) {
        certificate.organizations = OrganizationsOfSubject(ToString(subjects.front()));
      }
      credentials.certificate = std::move(certificate);
    }
  }
  // Only a call without other credentials is named by its peer (the
  // Authenticator's order), so only such a call pays for peer() (a string).
  if (unix_peers != nullptr && credentials.bearer_token.empty() && !credentials.certificate) {
    credentials.unix_peer = unix_peers->Find(context.peer());
  }
  return credentials;
}

}  // namespace wm::rpc
