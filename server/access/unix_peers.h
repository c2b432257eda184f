#ifndef WM_SERVER_ACCESS_UNIX_PEERS_H_
#define WM_SERVER_ACCESS_UNIX_PEERS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/access/identity.h"

namespace wm::access {

// Who the processes at the other end of the daemon's Unix sockets are: a
// table from a peer's uid (or, failing that, its primary gid), as the kernel
// reports it (SO_PEERCRED), to a user and groups as the apiserver names them.
// A scheduler beside the daemon in one pod reaches it over a socket in a
// shared emptyDir and needs no token: its uid says who it is, and RBAC then
// decides what that user may do, as for any other caller. Immutable once
// built; safe to share between threads.
class UnixPeerTable {
 public:
  // One line of the table, as --unix-peer-identity gives it:
  // "uid:UID=USER[;GROUP...]" or "gid:GID=USER[;GROUP...]". InvalidArgument
  // naming what is wrong.
  absl::Status Add(absl::string_view line);

  // The identity of a peer running as `uid` with primary group `gid`: the
  // uid's line, else the gid's; nullopt when neither is in the table.
  std::optional<SharedIdentity> Find(uint32_t uid, uint32_t gid) const;

  bool empty() const { return by_uid_.empty() && by_gid_.empty(); }

 private:
  std::map<uint32_t, SharedIdentity> by_uid_;
  std::map<uint32_t, SharedIdentity> by_gid_;
};

// Checks one --unix-peer-identity line (UnixPeerTable::Add's form).
absl::Status CheckUnixPeerIdentity(absl::string_view line);

}  // namespace wm::access

#endif  // WM_SERVER_ACCESS_UNIX_PEERS_H_
