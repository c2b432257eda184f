#ifndef WM_SERVER_ACCESS_IDENTITY_H_
#define WM_SERVER_ACCESS_IDENTITY_H_

#include <cstdint>
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

  // The process at the other end of a Unix socket, as the kernel reports it
  // (SO_PEERCRED) when the connection was accepted.
  struct UnixPeer {
    uint32_t uid = 0;
    uint32_t gid = 0;
    int32_t pid = 0;
  };

  std::string bearer_token;  // from `authorization: Bearer ...`; empty: none
  std::optional<Certificate> certificate;
  std::optional<UnixPeer> unix_peer;  // calls over a Unix socket the daemon accepted
};

}  // namespace wm::access

#endif  // WM_SERVER_ACCESS_IDENTITY_H_
