#ifndef WM_SERVER_ACCESS_IDENTITY_H_
#define WM_SERVER_ACCESS_IDENTITY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wm::access {

// Who a caller is, named as the apiserver names users: what a TokenReview
// answers for a token, or what a client certificate's subject says (CN the
// user, each O a group). Authorization asks the apiserver about exactly this
// user, so RBAC bindings written for the cluster apply to the daemon's
// callers unchanged.
struct Identity {
  std::string user;  // "system:serviceaccount:team-a:reader", "alice"
  std::string uid;
  std::vector<std::string> groups;  // "system:serviceaccounts", "system:authenticated", ...
  std::map<std::string, std::vector<std::string>> extra;

  bool operator==(const Identity&) const = default;
};

// An identity as caches and calls share it: made once per token review (or
// certificate), never copied per call.
using SharedIdentity = std::shared_ptr<const Identity>;

// What a call presents to be authenticated, as its transport read it.
struct CallerCredentials {
  // The verified client certificate of a mutual-TLS connection.
  struct Certificate {
    std::string common_name;
    std::vector<std::string> organizations;
  };

  std::string bearer_token;  // from `authorization: Bearer ...`; empty: none
  std::optional<Certificate> certificate;
};

}  // namespace wm::access

#endif  // WM_SERVER_ACCESS_IDENTITY_H_
