#include "server/resolution/resources.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::resolution {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// The scheduler's sum: containers plus sidecar init containers, the max
// with the largest ordinary init container, pod-level cpu/memory replacing
// the containers', overhead on top; per resource the request, else the
// limit.
TEST(PodSpecRequestsTest, SumsAsTheSchedulerDoes) {
  Json spec = Json::parse(R"({
    "containers": [
      {"resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": "2"}}},
      {"resources": {"limits": {"cpu": "500m"}}}
    ],
    "initContainers": [
      {"restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}},
      {"resources": {"requests": {"nvidia.com/gpu": "4", "cpu": "100m"}}}
    ],
    "overhead": {"cpu": "50m"}
  })");
  auto requests = PodSpecRequests(spec);
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_THAT(*requests, ElementsAre(Pair("cpu", 1800), Pair("memory", 1073741824000),
                                     Pair("nvidia.com/gpu", 4000)));

  spec["resources"] = Json::parse(R"({"requests": {"cpu": "3"}, "limits": {"memory": "2Gi"}})");
  requests = PodSpecRequests(spec);
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_THAT(*requests, ElementsAre(Pair("cpu", 3050), Pair("memory", 2147483648000),
                                     Pair("nvidia.com/gpu", 4000)));
}

// Every place a quantity can sit is named in its error, down to the
// resource.
TEST(PodSpecRequestsTest, ErrorsNameTheField) {
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {
      {R"({"containers": [{}, {"resources": {"requests": {"cpu": "lots"}}}]})",
       "containers[1].resources.requests.cpu: "},
      {R"({"initContainers": [{"resources": {"limits": {"memory": "-1"}}}]})",
       "initContainers[0].resources.limits.memory: quantity \"-1\" is negative (at least 0)"},
      {R"({"resources": {"requests": {"cpu": true}}})",
       "resources.requests.cpu: true is not a quantity"},
      {R"({"overhead": {"memory": "x"}})", "overhead.memory: "},
  };
  for (const Case& c : cases) {
    auto requests = PodSpecRequests(Json::parse(c.spec));
    ASSERT_FALSE(requests.ok()) << c.spec;
    EXPECT_EQ(requests.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(requests.status().message(), c.message))
        << c.spec << ": " << requests.status().message();
  }
}

TEST(FragmentedRequestsTest, SumsContainersThenFallsBackToResources) {
  auto requests = FragmentedRequests(Json::parse(R"({
    "containers": [{"resources": {"requests": {"cpu": "1"}}}],
    "container": {"resources": {"limits": {"cpu": "2"}}},
    "resources": {"requests": {"cpu": "7"}}
  })"));
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_THAT(*requests, ElementsAre(Pair("cpu", 3000)));

  requests = FragmentedRequests(Json::parse(R"({"resources": {"requests": {"cpu": "7"}}})"));
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_THAT(*requests, ElementsAre(Pair("cpu", 7000)));

  requests = FragmentedRequests(
      Json::parse(R"({"container": {"resources": {"requests": {"cpu": "?"}}}})"));
  ASSERT_FALSE(requests.ok());
  EXPECT_TRUE(absl::StartsWith(requests.status().message(), "container.resources.requests.cpu: "))
      << requests.status().message();
}

}  // namespace
}  // namespace wm::resolution
