#include "server/resolution/resources.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::resolution {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// The amounts in order, names copied (gMock matches std::string names).
std::vector<std::pair<std::string, int64_t>> Entries(const Resources& r) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& [name, milli] : r) out.emplace_back(name, milli);
  return out;
}

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
  EXPECT_THAT(Entries(*requests), ElementsAre(Pair("cpu", 1800), Pair("memory", 1073741824000),
                                              Pair("nvidia.com/gpu", 4000)));

  spec["resources"] = Json::parse(R"({"requests": {"cpu": "3"}, "limits": {"memory": "2Gi"}})");
  requests = PodSpecRequests(spec);
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_THAT(Entries(*requests), ElementsAre(Pair("cpu", 3050), Pair("memory", 2147483648000),
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
  // Held: the amounts view the resource names of the spec they were read from.
  Json fragmented = Json::parse(R"({
    "containers": [{"resources": {"requests": {"cpu": "1"}}}],
    "container": {"resources": {"limits": {"cpu": "2"}}},
    "resources": {"requests": {"cpu": "7"}}
  })");
  auto requests = FragmentedRequests(fragmented);
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_THAT(Entries(*requests), ElementsAre(Pair("cpu", 3000)));

  fragmented = Json::parse(R"({"resources": {"requests": {"cpu": "7"}}})");
  requests = FragmentedRequests(fragmented);
  ASSERT_TRUE(requests.ok()) << requests.status();
  EXPECT_THAT(Entries(*requests), ElementsAre(Pair("cpu", 7000)));

  requests = FragmentedRequests(
      Json::parse(R"({"container": {"resources": {"requests": {"cpu": "?"}}}})"));
  ASSERT_FALSE(requests.ok());
  EXPECT_TRUE(absl::StartsWith(requests.status().message(), "container.resources.requests.cpu: "))
      << requests.status().message();
}

// Amounts stay sorted by name whatever order they are added in, each name
// once; more names than are held inline move to the heap unchanged.
TEST(ResourcesTest, KeepsNamesSortedAndUnique) {
  Resources r;
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.Find("cpu"), nullptr);
  const char* names[] = {"memory", "cpu", "nvidia.com/gpu", "cpu", "a", "zz", "memory", "b"};
  int64_t amount = 0;
  for (const char* name : names) r[name] += ++amount;
  EXPECT_THAT(Entries(r),
              ElementsAre(Pair("a", 5), Pair("b", 8), Pair("cpu", 2 + 4), Pair("memory", 1 + 7),
                          Pair("nvidia.com/gpu", 3), Pair("zz", 6)));
  ASSERT_NE(r.Find("memory"), nullptr);
  EXPECT_EQ(*r.Find("memory"), 8);
  EXPECT_EQ(r.Find("mem"), nullptr);
  EXPECT_EQ(r.Find("memoryx"), nullptr);
  r.clear();
  EXPECT_TRUE(r.empty());
}

// Sums scale each amount and name the overflowing resource.
TEST(ResourcesTest, AddScaledSumsByNameAndReportsOverflow) {
  Resources into, r;
  into["cpu"] = 1000;
  r["cpu"] = 500;
  r["nvidia.com/gpu"] = 1000;
  ASSERT_TRUE(AddScaled(into, r, 4).ok());
  EXPECT_THAT(Entries(into), ElementsAre(Pair("cpu", 3000), Pair("nvidia.com/gpu", 4000)));
  r["memory"] = std::numeric_limits<int64_t>::max() / 2;
  absl::Status s = AddScaled(into, r, 3);
  EXPECT_TRUE(absl::StartsWith(s.message(), "memory: ")) << s;
}

}  // namespace
}  // namespace wm::resolution
