#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "client/wmctl/snapshot_daemon.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/common/testing/scratch_dir.h"
#include "server/common/yaml_json.h"

namespace wm::wmctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Offline commands: describe -f, and validate and definitions with
// --offline (RunCli gives wmctl an empty environment).
Result RunOffline(std::vector<std::string> argv, const std::string& stdin_text = "") {
  return RunCli(argv, {}, stdin_text);
}

const std::string kSeed = std::string(WM_SOURCE_DIR) + "/integration_tests/seed/";
const std::string kCatalog = std::string(WM_SOURCE_DIR) + "/catalog/";

TEST(WmctlTest, DescribeSeedManifest) {
  Result r = RunOffline({"describe", "-f", kSeed + "jobset.yaml"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "JobSet/demo   namespace: default   definition: jobset-x-k8s-io-jobset-v1alpha2 "
            "(catalog)   (file mode: no live status)\n"
            "\n"
            "`-- replicatedjob  replicas: 3  gpu: 12\n"
            "    |-- leader     replicas: 1  gpu: 4\n"
            "    `-- worker     replicas: 2  gpu: 8\n"
            "\n"
            "Resources:\n"
            "COMPONENT   REPLICAS   GPU   CPU   MEMORY\n"
            "leader      1          4     0     0\n"
            "worker      2          8     0     0\n"
            "TOTAL       3          12    0     0\n");
}

// describe -f reads a JSON manifest as ResolveWorkload reads inline objects:
// `replicas: 1e400` is refused by both (it used to resolve as 1 here).
TEST(WmctlTest, DescribeFileRefusesNumbersTheDaemonRefuses) {
  Json jobset = (*ReadYamlFile(kSeed + "jobset.yaml"))[0];
  jobset["spec"]["replicatedJobs"][0]["replicas"] = 123456789;
  std::string json = jobset.dump();
  json.replace(json.find("123456789"), 9, "1e400");
  Result r = RunOffline({"describe", "-f", "-"}, json);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("number out of range at byte "));
  EXPECT_THAT(r.err, HasSubstr(": 1e400"));

  std::string yaml = ToYaml(jobset);
  yaml.replace(yaml.find("123456789"), 9, "1e400");
  r = RunOffline({"describe", "-f", "-"}, yaml);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("number out of range: 1e400"));

  // Deeper than the bound: refused with it, as the daemon does.
  json = jobset.dump();
  json.insert(json.find("\"spec\":{") + 8,
              "\"x\":" + std::string(300, '[') + std::string(300, ']') + ",");
  r = RunOffline({"describe", "-f", "-"}, json);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("nesting deeper than 100 levels at byte "));
}

// A component whose expression fails on the manifest (the Sweep has no
// evaluators: `.spec.evaluators[].name` cannot iterate over null) costs its
// row only: the tree, the pods and the phase are shown, the error on the
// component's row.
TEST(WmctlTest, DescribeFileShowsAPartialAnswer) {
  const std::vector<std::string> describe = {
      "describe", "-f", TestdataDir() + "/snapshot/sweep.yaml", "--definitions",
      TestdataDir() + "/definitions/sweep.yaml"};
  Result r = RunOffline(describe);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("|-- trial               1/2 ready  gpu: 2  gpu-node-4\n"
                               "|   `-- search-trial-0  Running    gpu: 1  gpu-node-4\n"
                               "`-- evaluator  error: "
                               "spec.structureDefinition.childComponents[1].instanceIdPath: "));
  EXPECT_THAT(r.out, HasSubstr("\nPhase: Running\n"));

  // --component-limit keeps the failed component's row before the others.
  std::vector<std::string> limited = describe;
  limited.insert(limited.end(), {"--component-limit", "1"});
  r = RunOffline(limited);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("|-- evaluator  error: "));
  EXPECT_THAT(r.out, Not(HasSubstr("-- trial")));
  EXPECT_THAT(r.out, HasSubstr("`-- ... and 1 more component(s)"));
}

TEST(WmctlTest, DescribeSeedWithPods) {
  Result r = RunOffline({"describe", "-f", kSeed + "cluster-state.yaml"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "JobSet/demo   namespace: default   definition: jobset-x-k8s-io-jobset-v1alpha2 "
      "(catalog)   (file mode)\n"
      "\n"
      // kli's tree: the multi-instance component's row above its
      // instances, with their sums.
      "`-- replicatedjob                3/3 ready  gpu: 12  gpu-node-1,gpu-node-2,gpu-node-3\n"
      "    |-- leader                   1/1 ready  gpu: 4   gpu-node-1\n"
      "    |   `-- demo-leader-0-0-x0l  Running    gpu: 4   gpu-node-1\n"
      "    `-- worker                   2/2 ready  gpu: 8   gpu-node-2,gpu-node-3\n"
      "        |-- demo-worker-0-0-x0w  Running    gpu: 4   gpu-node-2\n"
      "        `-- demo-worker-1-0-x1w  Running    gpu: 4   gpu-node-3\n"
      "\n"
      "Phase: Running\n"
      "\n"
      "Resources:\n"
      "COMPONENT   REPLICAS   GPU   CPU   MEMORY\n"
      "leader      1          4     0     0\n"
      "worker      2          8     0     0\n"
      "TOTAL       3          12    0     0\n");
}

TEST(WmctlTest, DescribeJsonHasMatchedStatusesAndGang) {
  Result r = RunOffline({"describe", "-f", kSeed + "cluster-state.yaml", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  Json view = Json::parse(r.out);
  EXPECT_EQ(view["matchedStatuses"], Json::parse(R"(["Running"])"));
  EXPECT_EQ(view["resources"]["gpus"], 12);
  // Components nest as the tree does: replicatedjob with its instances.
  EXPECT_EQ(view["components"].size(), 1);
  EXPECT_EQ(view["components"][0]["name"], "replicatedjob");
  EXPECT_EQ(view["components"][0]["replicas"],
            Json::parse(R"({"desired":3,"current":3,"ready":3})"));
  EXPECT_EQ(view["components"][0]["resources"]["gpus"], 12);
  EXPECT_EQ(view["components"][0]["children"][1]["name"], "worker");
  EXPECT_EQ(view["components"][0]["children"][1]["replicas"],
            Json::parse(R"({"desired":2,"current":2,"ready":2})"));
  EXPECT_EQ(view["gang"]["podGroups"][0]["minMember"], 3);
}

TEST(WmctlTest, PodLimitShowsUnhealthyFirst) {
  std::string text = R"(
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: ns}
spec:
  replicas: 3
  template: {spec: {containers: [{name: c}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: a}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable}]}
---
apiVersion: v1
kind: Pod
metadata: {name: c}
status: {phase: Running, conditions: [{type: Ready, status: "True"}]}
)";
  std::string definition = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: rs}
spec:
  structureDefinition:
    rootComponent:
      name: replicaset
      kind: {group: apps, version: v1, kind: ReplicaSet}
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition: {replicasPath: .spec.replicas}
      statusDefinition: {statusMappings: {running: [{}]}}
)";
  wm::testing::ScratchDir scratch;
  const std::string& dir = scratch.path();
  std::ofstream(dir + "/rs-def.yaml") << definition;
  Result r = RunOffline(
      {"describe", "-f", "-", "--definitions", dir + "/rs-def.yaml", "--pod-limit", "1"}, text);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("`-- replicaset  2/3 ready"));
  EXPECT_THAT(r.out, HasSubstr("|-- b       Pending (Unschedulable)    <none>"));
  EXPECT_THAT(r.out, HasSubstr("`-- ... and 2 more (1 unhealthy shown)"));
}

TEST(WmctlTest, ValidateFormatsAndExitCodes) {
  Result ok =
      RunOffline({"validate", kCatalog + "jobset-x-k8s-io-jobset-v1alpha2.yaml", "--offline"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("OK: " + kCatalog +
                                "jobset-x-k8s-io-jobset-v1alpha2.yaml is a valid Karta definition "
                                "(GVK: jobset.x-k8s.io/v1alpha2, Kind=JobSet)"));
  Result bad = RunOffline({"validate", "-", "--offline"}, R"yaml(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: bad}
spec:
  structureDefinition:
    rootComponent:
      name: r
      kind: {group: g, version: v1, kind: K}
      statusDefinition: {statusMappings: {running: [{byExpression: {expression: "del(.a)", expectedResult: x}}]}}
    childComponents: [{name: c}]
)yaml");
  EXPECT_EQ(bad.code, 1);
  EXPECT_EQ(bad.out,
            "INVALID: stdin\n"
            "  spec.structureDefinition.childComponents[0].ownerRef: child component 'c' has no "
            "owner ref\n"
            "  spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running[0]."
            "byExpression.expression: del function is not allowed\n");
  EXPECT_THAT(bad.err, HasSubstr("error: 2 finding(s) in stdin"));
  EXPECT_EQ(RunOffline({"validate", "/nonexistent.yaml", "--offline"}).code, 2);
  EXPECT_EQ(RunOffline({"validate", "-", "--offline"}, "a: [").code, 2);
}

TEST(WmctlTest, UncoveredTypeExitsFour) {
  Result r = RunOffline({"describe", "-f", "-"},
                        "{apiVersion: example.com/v1, kind: Unknown, metadata: "
                        "{name: x}}");
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("no Workload Map definition covers example.com/v1/Unknown"));
  Result json = RunOffline({"describe", "-f", "-", "-o", "json"},
                           "{apiVersion: example.com/v1, kind: Unknown, metadata: {name: x}}");
  EXPECT_EQ(json.code, 4);
  EXPECT_EQ(Json::parse(json.out)["error"], "no_definition_for_type");
}

TEST(WmctlTest, UsageErrors) {
  EXPECT_EQ(RunOffline({}).code, 2);
  EXPECT_EQ(RunOffline({"describe"}).code, 2);
  EXPECT_EQ(RunOffline({"frobnicate"}).code, 2);
  EXPECT_EQ(RunOffline({"describe", "-f", "x", "--pod-limit", "-1"}).code, 2);
}

TEST(WmctlTest, DefinitionsListsTheCatalog) {
  Result r = RunOffline({"definitions", "--offline"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("NAME"));
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex(
                  "jobset-x-k8s-io-jobset-v1alpha2 +JobSet +catalog +jobset, replicatedjob"));
  Result one =
      RunOffline({"definitions", "jobset-x-k8s-io-jobset-v1alpha2", "--offline", "-o", "json"});
  EXPECT_EQ(Json::parse(one.out)["kind"], "Karta");
  EXPECT_EQ(RunOffline({"definitions", "nope", "--offline"}).code, 3);
}

// `wmctl describe -f` renders every catalog case input (the workload, its
// intermediate objects and pods in one file) as a tree with the Resources
// table, or fails exactly where the case expects resolution to fail.
TEST(WmctlTest, DescribesEveryCatalogCase) {
  namespace fs = std::filesystem;
  const std::string catalog = std::string(WM_SOURCE_DIR) + "/catalog";
  wm::testing::ScratchDir scratch;
  int described = 0;
  for (const auto& dir : fs::directory_iterator(catalog + "/cases")) {
    if (!dir.is_directory()) continue;
    std::string definition = catalog + "/" + dir.path().filename().string() + ".yaml";
    for (const auto& file : fs::directory_iterator(dir.path())) {
      Json c = ReadYamlFile(file.path().string()).value().at(0);
      std::string text = ToYaml(c["object"]);
      std::set<std::string> seen;
      for (const char* list : {"children", "pods"}) {
        for (const Json& o : c.value(list, Json::array())) {
          // Pods listed as owners too (a leader pod owning its group) once.
          std::string key = o.value("kind", "") + "/" + o["metadata"].value("name", "");
          if (seen.insert(key).second) text += "---\n" + ToYaml(o);
        }
      }
      std::string path = scratch.path() + "/case.yaml";
      std::ofstream(path) << text;
      Result r = RunOffline({"describe", "-f", path, "--no-catalog", "--definitions", definition});
      std::string where = file.path().string();
      if (c["expect"].contains("error")) {
        EXPECT_EQ(r.code, 1) << where << "\n" << r.err;
        continue;
      }
      ASSERT_EQ(r.code, 0) << where << "\n" << r.err;
      std::string head = c["object"]["kind"].get<std::string>() + "/" +
                         c["object"]["metadata"]["name"].get<std::string>();
      EXPECT_EQ(r.out.rfind(head, 0), 0u) << where << "\n" << r.out;
      EXPECT_THAT(r.out, HasSubstr("\nResources:\nCOMPONENT")) << where;
      EXPECT_THAT(r.out, ::testing::ContainsRegex("\nTOTAL +[0-9]")) << where;
      ++described;
    }
  }
  EXPECT_GT(described, 400);
}

}  // namespace
}  // namespace wm::wmctl
