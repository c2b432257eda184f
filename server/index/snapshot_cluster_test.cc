// SnapshotCluster::Load: files are decoded on several threads, yet the
// result is what reading them one at a time in name order gives.

#include "server/index/snapshot_cluster.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json_path.h"
#include "server/common/testing/scratch_dir.h"

namespace wm::index {
namespace {

using ::testing::HasSubstr;

const Gvk kConfigMap{"", "v1", "ConfigMap"};
const Gvk kPod{"", "v1", "Pod"};

std::string ConfigMap(const std::string& name, const std::string& value) {
  return absl::StrCat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ", name,
                      "\n  namespace: ns\n  uid: uid-", name, "\ndata:\n  value: \"", value,
                      "\"\n");
}

// The value a loaded ConfigMap holds, or "(absent)".
std::string ValueOf(const SnapshotCluster& snapshot, const std::string& key) {
  auto store = snapshot.view().StoreFor(kConfigMap);
  auto object = store ? store->Get(key) : nullptr;
  return object ? FindString(*object->Document(), {"data", "value"}) : "(absent)";
}

TEST(SnapshotClusterTest, LoadsEveryFileOfTheTree) {
  wm::testing::ScratchDir dir("snapshot_cluster_test");
  // Enough files for every thread to take several, some in subdirectories,
  // a List among them, and a file that is not a manifest.
  for (int i = 0; i < 200; ++i) {
    dir.Write(absl::StrFormat("%s/cm-%03d.yaml", i % 2 ? "a" : "b/c", i),
              ConfigMap(absl::StrCat("cm-", i), absl::StrCat("v", i)));
  }
  dir.Write("list.json", R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2", "namespace": "team"}}]})");
  dir.Write("README.md", "not a manifest");

  auto snapshot = SnapshotCluster::Load(dir.path(), nullptr);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->size(), 202u);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(ValueOf(**snapshot, absl::StrCat("ns/cm-", i)), absl::StrCat("v", i));
  }
  // Objects without a namespace are in "default"; without a uid they get
  // one derived from their kind and name.
  auto pods = (*snapshot)->view().StoreFor(kPod);
  ASSERT_NE(pods, nullptr);
  ASSERT_NE(pods->Get("default/p1"), nullptr);
  EXPECT_EQ(pods->Get("default/p1")->uid(), "snapshot:Pod/default/p1");
  ASSERT_NE(pods->Get("team/p2"), nullptr);
}

TEST(SnapshotClusterTest, ALaterFileReplacesAnEarlierOnesObject) {
  wm::testing::ScratchDir dir("snapshot_cluster_test");
  // The same object in many files: the last by name wins, whichever
  // thread decoded it.
  for (int i = 0; i < 100; ++i) {
    dir.Write(absl::StrFormat("f-%03d.yaml", i), ConfigMap("same", absl::StrCat("v", i)));
  }
  for (int run = 0; run < 5; ++run) {
    auto snapshot = SnapshotCluster::Load(dir.path(), nullptr);
    ASSERT_TRUE(snapshot.ok()) << snapshot.status();
    EXPECT_EQ(ValueOf(**snapshot, "ns/same"), "v99");
  }
}

TEST(SnapshotClusterTest, TheFirstBadFileInNameOrderIsReported) {
  wm::testing::ScratchDir dir("snapshot_cluster_test");
  for (int i = 0; i < 100; ++i) {
    dir.Write(absl::StrFormat("f-%03d.yaml", i), ConfigMap(absl::StrCat("cm-", i), "v"));
  }
  dir.Write("f-040.yaml", "kind: ConfigMap\nmetadata: {name: x}\n");  // no apiVersion
  dir.Write("f-070.yaml", "a: [unclosed\n");
  for (int run = 0; run < 5; ++run) {
    auto snapshot = SnapshotCluster::Load(dir.path(), nullptr);
    ASSERT_FALSE(snapshot.ok());
    EXPECT_THAT(snapshot.status().message(), HasSubstr("f-040.yaml"));
    EXPECT_THAT(snapshot.status().message(),
                HasSubstr("every object needs apiVersion, kind and metadata.name"));
  }
  dir.Write("f-040.yaml", ConfigMap("cm-40", "v"));
  auto snapshot = SnapshotCluster::Load(dir.path(), nullptr);
  ASSERT_FALSE(snapshot.ok());
  EXPECT_THAT(snapshot.status().message(), HasSubstr("f-070.yaml: "));
}

TEST(SnapshotClusterTest, AnEmptyDirectoryIsAnEmptyClusterAndAFileIsNoDirectory) {
  wm::testing::ScratchDir dir("snapshot_cluster_test");
  auto empty = SnapshotCluster::Load(dir.path(), nullptr);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)->size(), 0u);
  std::string file = dir.Write("one.yaml", ConfigMap("a", "b"));
  auto not_directory = SnapshotCluster::Load(file, nullptr);
  ASSERT_FALSE(not_directory.ok());
  EXPECT_THAT(not_directory.status().message(), HasSubstr("not a directory"));
}

}  // namespace
}  // namespace wm::index
