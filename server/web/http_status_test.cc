#include "server/web/http_status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json.h"

namespace wm::web {
namespace {

TEST(HttpStatusTest, EveryCodeHasItsStatus) {
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::OK), 200);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::INVALID_ARGUMENT), 400);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::FAILED_PRECONDITION), 400);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::OUT_OF_RANGE), 400);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::UNAUTHENTICATED), 401);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::PERMISSION_DENIED), 403);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::NOT_FOUND), 404);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::ALREADY_EXISTS), 409);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::ABORTED), 409);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::RESOURCE_EXHAUSTED), 429);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::CANCELLED), 499);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::UNIMPLEMENTED), 501);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::UNAVAILABLE), 503);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::DEADLINE_EXCEEDED), 504);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::INTERNAL), 500);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::UNKNOWN), 500);
  EXPECT_EQ(HttpStatusOf(grpc::StatusCode::DATA_LOSS), 500);
}

TEST(HttpStatusTest, ErrorJsonIsGooglesShapeAndSurvivesBadBytes) {
  Json error = Json::parse(ErrorJson(grpc::StatusCode::PERMISSION_DENIED, "no \"list\" for you"));
  EXPECT_EQ(error["error"]["code"], 403);
  EXPECT_EQ(error["error"]["status"], "PERMISSION_DENIED");
  EXPECT_EQ(error["error"]["message"], "no \"list\" for you");
  std::string bad = ErrorJson(grpc::StatusCode::INTERNAL, "bad \xff byte");
  EXPECT_EQ(bad.find('\n'), std::string::npos);
  EXPECT_NO_FATAL_FAILURE(Json::parse(bad));
}

}  // namespace
}  // namespace wm::web
