#include "server/common/status_code_name.h"

#include "gtest/gtest.h"

namespace wm {
namespace {

TEST(StatusCodeNameTest, NamesAsGrpcDoes) {
  EXPECT_EQ(StatusCodeName(absl::StatusCode::kOk), "OK");
  EXPECT_EQ(StatusCodeName(absl::StatusCode::kResourceExhausted), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(StatusCodeName(static_cast<absl::StatusCode>(17)), "17");
}

}  // namespace
}  // namespace wm
