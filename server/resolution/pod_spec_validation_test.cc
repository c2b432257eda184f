// The apiserver's checks of pod template values, each with a value it
// accepts and one it refuses, and the exact field named.

#include "server/resolution/pod_spec_validation.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/resolution/test_support.h"

namespace wm::resolution {
namespace {

using ::testing::HasSubstr;
using testing::Yaml;

#define EXPECT_VALID(call)                \
  do {                                    \
    absl::Status status_ = (call);        \
    EXPECT_TRUE(status_.ok()) << status_; \
  } while (false)

// The message of an InvalidArgument status, "" (failing) for any other.
std::string Refusal(const absl::Status& status) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

TEST(PodSpecValidationTest, SchedulerAndPriorityClassNamesAreDnsSubdomains) {
  EXPECT_VALID(ValidateDnsSubdomainName("kai-scheduler", "changes[0].scheduler_name"));
  EXPECT_THAT(Refusal(ValidateDnsSubdomainName("Kai Scheduler", "changes[0].scheduler_name")),
              HasSubstr("changes[0].scheduler_name: \"Kai Scheduler\": must be a lowercase RFC "
                        "1123 subdomain"));
  EXPECT_THAT(Refusal(ValidateDnsSubdomainName(std::string(254, 'a'), "f")),
              HasSubstr("f: \"aaaa"));
}

TEST(PodSpecValidationTest, Labels) {
  EXPECT_VALID(ValidateLabels(Yaml("{team: ml, example.com/tier: gold, empty: ''}"), "l"));
  EXPECT_THAT(Refusal(ValidateLabels(Yaml("{'bad key': v}"), "changes[0].labels")),
              HasSubstr("changes[0].labels key: \"bad key\": name part must be alphanumeric"));
  EXPECT_THAT(Refusal(ValidateLabels(Json{{std::string(64, 'k'), "v"}}, "l")),
              HasSubstr("name part must be no more than 63 characters"));
  EXPECT_THAT(Refusal(ValidateLabels(Json{{std::string(254, 'p') + "/k", "v"}}, "l")),
              HasSubstr("prefix part must be no more than 253 characters"));
  EXPECT_THAT(Refusal(ValidateLabels(Yaml("{team: 'm l'}"), "changes[0].labels")),
              HasSubstr("changes[0].labels[\"team\"]: \"m l\": must be empty or alphanumeric"));
  EXPECT_THAT(Refusal(ValidateLabels(Json{{"team", std::string(64, 'v')}}, "l")),
              HasSubstr("l[\"team\"]: \"vvv"));
  EXPECT_THAT(Refusal(ValidateLabels(Yaml("{team: 3}"), "l")),
              HasSubstr("l[\"team\"]: must be a string, not a number"));
  EXPECT_THAT(Refusal(ValidateLabels(Yaml("[a]"), "l")), HasSubstr("l: must be a map of strings"));
}

TEST(PodSpecValidationTest, Annotations) {
  EXPECT_VALID(ValidateAnnotations(Yaml("{Example.com/Note: 'any text: at all!'}"), "a"));
  EXPECT_THAT(Refusal(ValidateAnnotations(Yaml("{'a b': x}"), "changes[0].annotations")),
              HasSubstr("changes[0].annotations key: \"a b\""));
  Json big = {{"a", std::string(kMaxAnnotationsTotalBytes - 1, 'x')}};
  EXPECT_VALID(ValidateAnnotations(big, "a"));
  big["b"] = "x";
  EXPECT_THAT(Refusal(ValidateAnnotations(big, "a")),
              HasSubstr("a: annotations total 262146 bytes (keys and values), more than the "
                        "262144 Kubernetes allows"));
}

TEST(PodSpecValidationTest, Tolerations) {
  EXPECT_VALID(ValidateTolerations(Yaml(R"([
    {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule},
    {key: dedicated, operator: Equal, value: ml},
    {key: dedicated, value: ml, effect: PreferNoSchedule},
    {operator: Exists},
    {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute,
     tolerationSeconds: 300}])"),
                                   "t"));
  const std::string f = "changes[0].tolerations";
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("[{key: a, operator: Exists}, "
                                               "{key: a, operator: Maybe}]"),
                                          f)),
              HasSubstr("changes[0].tolerations[1].operator: \"Maybe\" is not one of Exists, "
                        "Equal"));
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("[{key: a, operator: Exists, value: v}]"), f)),
              HasSubstr("changes[0].tolerations[0].value: must be empty when operator is Exists"));
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("[{key: a, effect: NoExecut}]"), f)),
              HasSubstr("changes[0].tolerations[0].effect: \"NoExecut\" is not one of "
                        "NoSchedule, PreferNoSchedule, NoExecute"));
  EXPECT_THAT(
      Refusal(ValidateTolerations(Yaml("[{key: a, effect: NoSchedule, tolerationSeconds: 5}]"), f)),
      HasSubstr("changes[0].tolerations[0].effect: must be NoExecute when tolerationSeconds is "
                "set"));
  EXPECT_THAT(Refusal(ValidateTolerations(
                  Yaml("[{key: a, effect: NoExecute, tolerationSeconds: 1.5}]"), f)),
              HasSubstr("changes[0].tolerations[0].tolerationSeconds: must be an integer"));
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("[{value: v}]"), f)),
              HasSubstr("changes[0].tolerations[0].operator: must be Exists when key is empty"));
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("[{key: 'a b', operator: Exists}]"), f)),
              HasSubstr("changes[0].tolerations[0].key: \"a b\""));
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("[{key: a, value: 'x y'}]"), f)),
              HasSubstr("changes[0].tolerations[0].value: \"x y\""));
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("[{key: a, opertor: Exists}]"), f)),
              HasSubstr("changes[0].tolerations[0]: unknown field \"opertor\""));
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("[{key: 3}]"), f)),
              HasSubstr("changes[0].tolerations[0].key: must be a string, not a number"));
  EXPECT_THAT(Refusal(ValidateTolerations(Yaml("{key: a}"), f)),
              HasSubstr("changes[0].tolerations: must be a list, not an object"));
}

TEST(PodSpecValidationTest, NodeAffinity) {
  EXPECT_VALID(ValidateAffinity(Yaml(R"(
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: gpu.example.com/model, operator: In, values: [h100, a100]}
          - {key: spot, operator: DoesNotExist}
          - {key: gpus, operator: Gt, values: ['3']}
          matchFields:
          - {key: metadata.name, operator: NotIn, values: [node-1]}
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        preference:
          matchExpressions: [{key: zone, operator: In, values: [a]}])"),
                                "a"));
  const std::string f = "changes[0].affinity";
  auto refusal = [&](const char* yaml) { return Refusal(ValidateAffinity(Yaml(yaml), f)); };
  const std::string req =
      "changes[0].affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  EXPECT_THAT(refusal("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "{nodeSelectorTerms: []}}}"),
              HasSubstr(req + ".nodeSelectorTerms: must have at least one node selector term"));
  EXPECT_THAT(refusal("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near}]}]}}}"),
              HasSubstr(req + ".nodeSelectorTerms[0].matchExpressions[0].operator: \"Near\" is not "
                              "one of In, NotIn, Exists, DoesNotExist, Gt, Lt"));
  EXPECT_THAT(refusal("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In}]}]}}}"),
              HasSubstr("matchExpressions[0].values: must be specified when operator is In"));
  EXPECT_THAT(refusal("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Exists, "
                      "values: [x]}]}]}}}"),
              HasSubstr("matchExpressions[0].values: may not be specified when operator is "
                        "Exists"));
  EXPECT_THAT(refusal("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Lt, "
                      "values: ['1', '2']}]}]}}}"),
              HasSubstr("matchExpressions[0].values: must be a single value when operator is Gt "
                        "or Lt"));
  EXPECT_THAT(refusal("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "{nodeSelectorTerms: [{matchExpressions: [{key: 'a b', operator: "
                      "Exists}]}]}}}"),
              HasSubstr("matchExpressions[0].key: \"a b\""));
  EXPECT_THAT(refusal("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "{nodeSelectorTerms: [{matchFields: [{key: metadata.labels, operator: In, "
                      "values: [x]}]}]}}}"),
              HasSubstr("matchFields[0].key: \"metadata.labels\" is not metadata.name"));
  EXPECT_THAT(refusal("{nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                      "[{weight: 0, preference: {}}]}}"),
              HasSubstr("preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be an "
                        "integer in the range 1-100"));
  EXPECT_THAT(refusal("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: []}}"),
              HasSubstr(req + ": must be an object, not an array"));
  EXPECT_THAT(refusal("{nodeAfinity: {}}"), HasSubstr("changes[0].affinity: unknown field "
                                                      "\"nodeAfinity\""));
}

TEST(PodSpecValidationTest, PodAffinityAndAntiAffinity) {
  EXPECT_VALID(ValidateAffinity(Yaml(R"(
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels: {app: trainer}
          matchExpressions: [{key: role, operator: NotIn, values: [launcher]}]
        namespaces: [ml]
        topologyKey: kubernetes.io/hostname
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm: {topologyKey: topology.kubernetes.io/zone,
                          matchLabelKeys: [jobset.sigs.k8s.io/jobset-name]})"),
                                "a"));
  const std::string f = "changes[0].affinity";
  auto refusal = [&](const char* yaml) { return Refusal(ValidateAffinity(Yaml(yaml), f)); };
  EXPECT_THAT(refusal("{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "[{labelSelector: {matchLabels: {app: x}}}]}}"),
              HasSubstr("changes[0].affinity.podAffinity."
                        "requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: is "
                        "required"));
  EXPECT_THAT(refusal("{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "[{topologyKey: zone, labelSelector: {matchExpressions: [{key: a, "
                      "operator: Gt, values: ['1']}]}}]}}"),
              HasSubstr("labelSelector.matchExpressions[0].operator: \"Gt\" is not one of In, "
                        "NotIn, Exists, DoesNotExist"));
  EXPECT_THAT(refusal("{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "[{topologyKey: zone, namespaces: [ML]}]}}"),
              HasSubstr("[0].namespaces[0]: \"ML\": must be a lowercase RFC 1123 label"));
  EXPECT_THAT(refusal("{podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                      "[{topologyKey: zone, labelSelector: {matchLabels: {app: 'a b'}}}]}}"),
              HasSubstr("labelSelector.matchLabels[\"app\"]: \"a b\""));
  EXPECT_THAT(refusal("{podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                      "[{weight: 101, podAffinityTerm: {topologyKey: zone}}]}}"),
              HasSubstr("changes[0].affinity.podAntiAffinity."
                        "preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be an "
                        "integer in the range 1-100"));
  EXPECT_THAT(refusal("{podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                      "[{weight: 1}]}}"),
              HasSubstr("[0].podAffinityTerm: is required"));
}

TEST(PodSpecValidationTest, ResourceValues) {
  EXPECT_VALID(ValidateResourceValues(
      Yaml("{requests: {cpu: 500m, memory: 16Gi, ephemeral-storage: 1G, hugepages-2Mi: 1Gi, "
           "nvidia.com/gpu: '4'}, limits: {cpu: 2, nvidia.com/gpu: 4}}"),
      "r"));
  const std::string f = "changes[0].container_resources[\"worker\"]";
  auto refusal = [&](const char* yaml) { return Refusal(ValidateResourceValues(Yaml(yaml), f)); };
  EXPECT_THAT(refusal("{requests: {cpu: lots}}"),
              HasSubstr(f + ".requests[\"cpu\"]: \"lots\" is not a quantity"));
  EXPECT_THAT(refusal("{limits: {memory: '-3'}}"),
              HasSubstr(f + ".limits[\"memory\"]: \"-3\" must be greater than or equal to 0"));
  EXPECT_THAT(refusal("{limits: {memory: -3}}"),
              HasSubstr(f + ".limits[\"memory\"]: \"-3\" must be greater than or equal to 0"));
  EXPECT_THAT(refusal("{requests: 5}"),
              HasSubstr(f + ".requests: must be a map of resource names to quantities"));
  EXPECT_THAT(refusal("{requests: {cpu: [1]}}"),
              HasSubstr(f + ".requests[\"cpu\"]: must be a quantity"));
  EXPECT_THAT(refusal("{requests: {gpu: '1'}}"),
              HasSubstr(f + ".requests[\"gpu\"]: \"gpu\" is not a standard resource"));
  EXPECT_THAT(refusal("{requests: {nvidia.com/gpu: '0.5'}}"),
              HasSubstr(f + ".requests[\"nvidia.com/gpu\"]: \"0.5\" must be an integer"));
  EXPECT_THAT(refusal("{requests: {'nvidia.com/a b': '1'}}"),
              HasSubstr(f + ".requests[\"nvidia.com/a b\"]: \"nvidia.com/a b\""));
  EXPECT_THAT(refusal("{request: {cpu: '1'}}"), HasSubstr(f + ": unknown field \"request\""));
}

TEST(PodSpecValidationTest, ResourceRequirementsRelateRequestsToLimits) {
  EXPECT_VALID(ValidateResourceRequirements(
      Yaml("{requests: {cpu: 1, nvidia.com/gpu: 4}, limits: {cpu: 2, nvidia.com/gpu: 4}}"), "r"));
  EXPECT_VALID(ValidateResourceRequirements(Yaml("{limits: {nvidia.com/gpu: 4}}"), "r"));
  EXPECT_THAT(Refusal(ValidateResourceRequirements(
                  Yaml("{requests: {cpu: '3'}, limits: {cpu: 2500m}}"), "r")),
              HasSubstr("r.requests[\"cpu\"]: 3 must be at most the \"cpu\" limit 2500m"));
  EXPECT_THAT(Refusal(ValidateResourceRequirements(
                  Yaml("{requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 4}}"), "r")),
              HasSubstr("r.requests[\"nvidia.com/gpu\"]: 2 must be equal to the "
                        "\"nvidia.com/gpu\" limit 4"));
  EXPECT_THAT(Refusal(ValidateResourceRequirements(Yaml("{requests: {nvidia.com/gpu: 2}}"), "r")),
              HasSubstr("r.limits: must set \"nvidia.com/gpu\", which cannot be overcommitted"));
}

TEST(PodSpecValidationTest, PodTemplate) {
  EXPECT_VALID(ValidatePodTemplate(Yaml(R"(
    metadata: {labels: {app: x}, annotations: {note: 'free text'}}
    spec:
      schedulerName: kai-scheduler
      priorityClassName: high
      nodeSelector: {pool: gpu}
      tolerations: [{operator: Exists}]
      affinity: {}
      containers: [{name: main, resources: {limits: {cpu: '1'}}}])"),
                                   "p"));
  const std::string f = "changes[0].pod_template";
  auto refusal = [&](const char* yaml) { return Refusal(ValidatePodTemplate(Yaml(yaml), f)); };
  EXPECT_THAT(refusal("{metadata: {labels: {app: 'a b'}}}"),
              HasSubstr(f + ".metadata.labels[\"app\"]"));
  EXPECT_THAT(refusal("{spec: {schedulerName: Kai}}"), HasSubstr(f + ".spec.schedulerName"));
  EXPECT_THAT(refusal("{spec: {priorityClassName: 'p c'}}"),
              HasSubstr(f + ".spec.priorityClassName"));
  EXPECT_THAT(refusal("{spec: {nodeSelector: {pool: 'g p u'}}}"),
              HasSubstr(f + ".spec.nodeSelector[\"pool\"]"));
  EXPECT_THAT(refusal("{spec: {tolerations: [{key: a, operator: Maybe}]}}"),
              HasSubstr(f + ".spec.tolerations[0].operator"));
  EXPECT_THAT(refusal("{spec: {affinity: {nodeAffinity: 1}}}"),
              HasSubstr(f + ".spec.affinity.nodeAffinity: must be an object"));
  EXPECT_THAT(refusal("{spec: {initContainers: [{name: i, resources: {requests: {cpu: x}}}]}}"),
              HasSubstr(f + ".spec.initContainers[0].resources.requests[\"cpu\"]"));
}

}  // namespace
}  // namespace wm::resolution
