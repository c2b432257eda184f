#include "server/web/http_status.h"

#include "absl/status/status.h"
#include "server/common/json.h"
#include "server/common/status_code_name.h"

namespace wm::web {

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    default:  // UNKNOWN, INTERNAL, DATA_LOSS
      return 500;
  }
}

std::string ErrorJson(grpc::StatusCode code, absl::string_view message) {
  // gRPC's codes are Abseil's, number for number.
  Json error = {{"code", HttpStatusOf(code)},
                {"status", StatusCodeName(static_cast<absl::StatusCode>(code))},
                {"message", std::string(message)}};
  // Replaced, not thrown on, should a message hold bytes that are not UTF-8.
  return Json{{"error", std::move(error)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

observability::HttpServer::Response ErrorResponse(grpc::StatusCode code,
                                                  absl::string_view message) {
  observability::HttpServer::Response response;
  response.status = HttpStatusOf(code);
  response.content_type = "application/json";
  response.body = ErrorJson(code, message) + "\n";
  response.headers = {"Cache-Control: no-store"};
  return response;
}

}  // namespace wm::web
