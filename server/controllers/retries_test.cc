#include "server/controllers/retries.h"

#include "gtest/gtest.h"

namespace wm::controllers {
namespace {

TEST(RetriesTest, BackoffDoublesToItsBoundAndStartsOverAfterASuccess) {
  Retries retries(absl::Milliseconds(500), absl::Seconds(3));
  absl::Status refused = absl::UnavailableError("HTTP 403");
  EXPECT_EQ(retries.Failed("a", refused).after, absl::Milliseconds(500));
  EXPECT_EQ(retries.Failed("a", refused).after, absl::Seconds(1));
  EXPECT_EQ(retries.Failed("a", refused).after, absl::Seconds(2));
  EXPECT_EQ(retries.Failed("a", refused).after, absl::Seconds(3));
  for (int i = 0; i < 40; ++i) EXPECT_EQ(retries.Failed("a", refused).after, absl::Seconds(3));
  EXPECT_EQ(retries.Failed("b", refused).after, absl::Milliseconds(500));  // per key
  retries.Succeeded("a");
  EXPECT_EQ(retries.Failed("a", refused).after, absl::Milliseconds(500));
}

TEST(RetriesTest, AnErrorIsNewOnlyWhenItChanges) {
  Retries retries(absl::Milliseconds(1), absl::Seconds(1));
  EXPECT_TRUE(retries.Failed("a", absl::UnavailableError("HTTP 403")).new_error);
  EXPECT_FALSE(retries.Failed("a", absl::UnavailableError("HTTP 403")).new_error);
  EXPECT_TRUE(retries.Failed("a", absl::AbortedError("conflict")).new_error);
  EXPECT_TRUE(retries.Failed("b", absl::AbortedError("conflict")).new_error);
  retries.Succeeded("a");
  EXPECT_TRUE(retries.Failed("a", absl::AbortedError("conflict")).new_error);
}

}  // namespace
}  // namespace wm::controllers
