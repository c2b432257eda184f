#include "server/web/workload_path.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::web {
namespace {

using ::testing::HasSubstr;

TEST(WorkloadPathTest, NamespacedAndClusterScopedWithOrWithoutGang) {
  auto path = ParseWorkloadPath("namespaces/team-a/workloads/JobSet/demo");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(path->ref.namespace_(), "team-a");
  EXPECT_EQ(path->ref.kind(), "JobSet");
  EXPECT_EQ(path->ref.name(), "demo");
  EXPECT_FALSE(path->gang);

  path = ParseWorkloadPath("namespaces/team-a/workloads/jobsets/demo/gang");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(path->ref.resource(), "jobsets");
  EXPECT_EQ(path->ref.kind(), "");
  EXPECT_TRUE(path->gang);

  path = ParseWorkloadPath("workloads/ClusterThing/x%2Ey/gang");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(path->ref.namespace_(), "");
  EXPECT_EQ(path->ref.name(), "x.y");
  EXPECT_TRUE(path->gang);
}

TEST(WorkloadPathTest, OtherShapesAreNotFoundAndBadSegmentsInvalid) {
  for (const char* bad :
       {"", "namespaces", "namespaces/a/workloads/JobSet",
        "namespaces/a/workloads/JobSet/demo/other", "namespaces/a/things/JobSet/demo",
        "workloads/JobSet", "workloads/JobSet/demo/gang/more", "nothing/here"}) {
    auto path = ParseWorkloadPath(bad);
    ASSERT_FALSE(path.ok()) << bad;
    EXPECT_TRUE(absl::IsNotFound(path.status())) << bad << ": " << path.status();
    EXPECT_THAT(path.status().message(), HasSubstr("namespaces/{namespace}/workloads"));
  }
  auto empty = ParseWorkloadPath("namespaces//workloads/JobSet/demo");
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(empty.status()));
  EXPECT_THAT(empty.status().message(), HasSubstr("path segment 2 is empty"));
  EXPECT_TRUE(absl::IsInvalidArgument(ParseWorkloadPath("workloads/JobSet/a%zz").status()));
}

}  // namespace
}  // namespace wm::web
