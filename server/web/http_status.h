#ifndef WM_SERVER_WEB_HTTP_STATUS_H_
#define WM_SERVER_WEB_HTTP_STATUS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"
#include "server/observability/http_server.h"

namespace wm::web {

// The HTTP status of a gRPC code, as Google's API gateways map them
// (INVALID_ARGUMENT 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403,
// NOT_FOUND 404, RESOURCE_EXHAUSTED 429, UNAVAILABLE 503, ...); the table is
// in docs/http-api.md.
int HttpStatusOf(grpc::StatusCode code);

// The JSON error body of a failed call, in Google's API error shape:
// {"error": {"code": 403, "status": "PERMISSION_DENIED", "message": "..."}}
// on one line.
std::string ErrorJson(grpc::StatusCode code, absl::string_view message);

// A response carrying ErrorJson with HttpStatusOf(code).
observability::HttpServer::Response ErrorResponse(grpc::StatusCode code, absl::string_view message);

}  // namespace wm::web

#endif  // WM_SERVER_WEB_HTTP_STATUS_H_
