#ifndef WM_SERVER_KUBE_API_CLIENT_H_
#define WM_SERVER_KUBE_API_CLIENT_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/kube/auth/kubeconfig.h"

namespace wm::kube {

struct HttpRequest {
  std::string method = "GET";
  // Path and query, e.g. "/api/v1/pods?limit=500". Query values must be
  // escaped by the caller (see QueryEscape).
  std::string path;
  std::string body;
  std::string content_type;  // for bodies: application/json, application/merge-patch+json, ...
  std::string accept = "application/json";
  // Whole-request deadline for Do(); Stream() uses idle_timeout instead.
  absl::Duration timeout = absl::Seconds(30);
  // Whom this request acts as, instead of the connection's impersonation
  // (for a write done on a caller's behalf); unset: the connection's.
  std::optional<Impersonation> impersonate;
};

struct HttpResponse {
  long status = 0;
  std::string body;
  // Seconds from a Retry-After header, or 0.
  int retry_after_seconds = 0;
};

// Talks to one apiserver over HTTPS (HTTP/2 when the server offers it) with
// the connection's TLS settings and credentials. Thread-safe: each call uses
// its own libcurl handle and connection; DNS and TLS sessions are shared.
//
// A 401 answer invalidates the credential (a rotated token file is re-read,
// an exec plugin re-run) and the request is retried once with the new one.
class ApiClient {
 public:
  explicit ApiClient(ClusterConnection connection);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  const ClusterConnection& connection() const { return connection_; }

  // Sends a request and reads the whole answer. Any HTTP status is a
  // response; an error means no answer (connection, TLS, timeout, auth
  // source failure) and is Unavailable (DeadlineExceeded for a timeout).
  absl::StatusOr<HttpResponse> Do(const HttpRequest& request) const;

  // Sends a request whose 2xx body is a long-lived stream (a watch) and
  // hands its bytes to `on_bytes` as they arrive; `on_bytes` returns false
  // to stop. Ends when the server ends the body (OK), when `cancel` becomes
  // true (Cancelled), or when no byte arrives for `idle_timeout`
  // (DeadlineExceeded: a silently dead connection). A non-2xx answer is
  // returned whole in the response without calling `on_bytes`.
  absl::StatusOr<HttpResponse> Stream(const HttpRequest& request,
                                      absl::FunctionRef<bool(absl::string_view)> on_bytes,
                                      const std::atomic<bool>* cancel,
                                      absl::Duration idle_timeout) const;

 private:
  struct Shared;
  absl::StatusOr<HttpResponse> Perform(const HttpRequest& request,
                                       absl::FunctionRef<bool(absl::string_view)>* on_bytes,
                                       const std::atomic<bool>* cancel,
                                       absl::Duration idle_timeout) const;

  ClusterConnection connection_;
  std::unique_ptr<Shared> shared_;
};

// Percent-escapes a query parameter value.
std::string QueryEscape(absl::string_view value);

// The message of a Kubernetes Status object in `body`, or the body itself
// (shortened) when it is not one: for error texts.
std::string StatusMessage(absl::string_view body);

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_API_CLIENT_H_
