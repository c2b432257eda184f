// What the service tells of who was let in, what they were allowed, and
// what they changed: for audit logs and access metrics.
#ifndef WM_SERVER_RPC_AUDIT_H_
#define WM_SERVER_RPC_AUDIT_H_

#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/access/access_reviewer.h"
#include "server/access/identity.h"

namespace wm::rpc {

// One access decision or one write. The pointers are valid only during the
// call to the Auditor: it copies what it keeps.
struct AuditEvent {
  enum class Kind {
    kAuthentication,  // who the caller is: OK, or why it is not let in
    kAuthorization,   // whether `who` may do `what`: OK, or PERMISSION_DENIED
    kApply,           // a MutatePodSpecs apply: the apiserver's answer
  };
  Kind kind;
  const char* method;
  // Null when the caller is not known (not authenticated, or calls are not).
  const access::Identity* who = nullptr;
  // For kAuthorization and kApply.
  const access::ResourceAttributes* what = nullptr;
  absl::Status status;
  // The decision came from a cache (or a certificate): no apiserver call.
  bool cached = false;
  // How long deciding (or applying) took.
  absl::Duration latency;
};

// Called on the thread that decided, which may be one of gRPC's: it must not
// block.
using Auditor = std::function<void(const AuditEvent&)>;

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_AUDIT_H_
