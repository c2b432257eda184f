#include "server/daemon/rpc_metrics.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::daemon {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<std::string> kMethods = {"ResolveWorkload", "ListWorkloads"};

TEST(RpcMetricsTest, CountsCallsByMethodAndCode) {
  observability::Registry registry;
  RpcMetrics metrics(registry, kMethods);
  metrics.Observe("ResolveWorkload", absl::StatusCode::kOk, absl::Milliseconds(1));
  metrics.Observe("ResolveWorkload", absl::StatusCode::kOk, absl::Milliseconds(1));
  metrics.Observe("ResolveWorkload", absl::StatusCode::kNotFound, absl::Seconds(2));
  std::string text = registry.Render();
  EXPECT_THAT(
      text,
      HasSubstr("workloadmap_rpc_requests_total{method=\"ResolveWorkload\",code=\"OK\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("workloadmap_rpc_requests_total{method=\"ResolveWorkload\",code="
                              "\"NOT_FOUND\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("workloadmap_rpc_duration_seconds_count{method=\"ResolveWorkload\"} 3\n"));
  EXPECT_THAT(
      text, HasSubstr("workloadmap_rpc_duration_seconds_sum{method=\"ResolveWorkload\"} 2.002\n"));
}

TEST(RpcMetricsTest, DeclaredMethodsStartAtZero) {
  observability::Registry registry;
  RpcMetrics metrics(registry, kMethods);
  std::string text = registry.Render();
  EXPECT_THAT(
      text, HasSubstr("workloadmap_rpc_requests_total{method=\"ListWorkloads\",code=\"OK\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("workloadmap_rpc_duration_seconds_count{method=\"ListWorkloads\"} 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("NOT_FOUND")));
}

TEST(RpcMetricsTest, OtherMethodsAndCodesAreCountedToo) {
  observability::Registry registry;
  RpcMetrics metrics(registry, kMethods);
  metrics.Observe("Undeclared", absl::StatusCode::kOk, absl::Milliseconds(1));
  metrics.Observe("Undeclared", static_cast<absl::StatusCode>(42), absl::Milliseconds(1));
  std::string text = registry.Render();
  EXPECT_THAT(text,
              HasSubstr("workloadmap_rpc_requests_total{method=\"Undeclared\",code=\"OK\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("workloadmap_rpc_requests_total{method=\"Undeclared\",code=\"42\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("workloadmap_rpc_duration_seconds_count{method=\"Undeclared\"} 2\n"));
}

// Calls finish on many gRPC threads at once (run under TSan in CI).
TEST(RpcMetricsTest, ConcurrentObserversLoseNoCall) {
  observability::Registry registry;
  RpcMetrics metrics(registry, kMethods);
  constexpr int kThreads = 4, kCalls = 5000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics, t] {
      for (int i = 0; i < kCalls; ++i) {
        metrics.Observe(t % 2 ? "ResolveWorkload" : "Undeclared",
                        i % 10 ? absl::StatusCode::kOk : absl::StatusCode::kUnavailable,
                        absl::Microseconds(i));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::string text = registry.Render();
  for (const char* method : {"ResolveWorkload", "Undeclared"}) {
    SCOPED_TRACE(method);
    std::string labels = absl::StrCat("{method=\"", method, "\",code=");
    EXPECT_THAT(text, HasSubstr(absl::StrCat("workloadmap_rpc_requests_total", labels, "\"OK\"} ",
                                             2 * kCalls * 9 / 10, "\n")));
    EXPECT_THAT(text, HasSubstr(absl::StrCat("workloadmap_rpc_requests_total", labels,
                                             "\"UNAVAILABLE\"} ", 2 * kCalls / 10, "\n")));
    EXPECT_THAT(text, HasSubstr(absl::StrCat("workloadmap_rpc_duration_seconds_count{method=\"",
                                             method, "\"} ", 2 * kCalls, "\n")));
  }
}

}  // namespace
}  // namespace wm::daemon
