#include "integration_tests/hostile/cases.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/util/json_util.h"
#include "server/common/json.h"
#include "server/common/yaml_json.h"
#include "workloadmap/v1/service.pb.h"

namespace wm::hostile {
namespace {

namespace v1 = workloadmap::v1;
using Code = grpc::StatusCode;

constexpr char kServicePrefix[] = "/workloadmap.v1.WorkloadMap/";
// Deeper than any manifest: the nesting that overflowed the stack.
constexpr int kDeepNesting = 100000;
// Hang bounds (see HostileCase::bound): an answer takes milliseconds on an
// idle machine, but a loaded 2-core one, or a sanitizer build, may take
// seconds for the largest requests.
constexpr absl::Duration kHangBound = absl::Seconds(10);
// Past the one jq evaluation's budget (EvalLimits::budget, 2 s): the
// answer may take the budget, plus the hang bound.
const absl::Duration kEvaluationBound = absl::Seconds(2) + kHangBound;
// 20,000 inline pods (5 MB): gRPC receives them and the request message is
// parsed before the count refuses them (their JSON is never parsed).
constexpr absl::Duration kManyObjectsBound = absl::Seconds(20);

const std::vector<Code> kInvalid = {Code::INVALID_ARGUMENT};
// A request that evaluates too long or too large an expression.
const std::vector<Code> kExhausted = {Code::DEADLINE_EXCEEDED, Code::RESOURCE_EXHAUSTED,
                                      Code::INVALID_ARGUMENT};

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }
std::string NestedObjects(int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += "{\"a\":";
  out += "1";
  out += std::string(depth, '}');
  return out;
}

// `object` with its "spec" replaced by the raw JSON text `spec` (which
// nlohmann could not even hold when it nests this deep).
std::string WithRawSpec(const Json& object, const std::string& spec) {
  Json copy = object;
  copy["spec"] = "@SPEC@";
  return absl::StrReplaceAll(copy.dump(), {{"\"@SPEC@\"", spec}});
}

// Invalid UTF-8: a lone continuation byte, an overlong '/', a surrogate.
const std::string kNotUtf8 = "x\x80y\xc0\xafz\xed\xa0\x80";

v1::ObjectRef DemoRef() {
  v1::ObjectRef ref;
  ref.set_kind("JobSet");
  ref.set_namespace_("default");
  ref.set_name("demo");
  return ref;
}

std::string ResolveInline(const std::string& object_json,
                          const std::vector<std::string>& pods = {}) {
  v1::ResolveWorkloadRequest request;
  request.mutable_inline_()->set_object_json(object_json);
  for (const std::string& pod : pods) request.mutable_inline_()->add_pod_json(pod);
  return request.SerializeAsString();
}

std::string ResolveRef(const v1::ObjectRef& ref) {
  v1::ResolveWorkloadRequest request;
  *request.mutable_ref() = ref;
  return request.SerializeAsString();
}

std::string MutateInline(const std::string& object_json,
                         const std::function<void(v1::PodTemplateChange&)>& change) {
  v1::MutatePodSpecsRequest request;
  request.mutable_inline_()->set_object_json(object_json);
  change(*request.add_changes());
  return request.SerializeAsString();
}

std::string MutateRef(const std::function<void(v1::PodTemplateChange&)>& change) {
  v1::MutatePodSpecsRequest request;
  *request.mutable_ref() = DemoRef();
  change(*request.add_changes());
  return request.SerializeAsString();
}

// `json` as a protobuf Struct or ListValue field of a change.
template <typename Message>
Message FromJson(const std::string& json) {
  Message message;
  (void)google::protobuf::util::JsonStringToMessage(json, &message);
  return message;
}

std::string GangInline(const std::string& pod_json, const std::string& top_owner_json) {
  v1::GetGangInstructionsRequest request;
  request.mutable_inline_pod()->set_pod_json(pod_json);
  request.mutable_inline_pod()->set_top_owner_json(top_owner_json);
  return request.SerializeAsString();
}

std::string List(const std::function<void(v1::ListWorkloadsRequest&)>& fill) {
  v1::ListWorkloadsRequest request;
  fill(request);
  return request.SerializeAsString();
}

std::string Validate(const std::string& yaml) {
  v1::ValidateDefinitionRequest request;
  request.set_definition_yaml(yaml);
  return request.SerializeAsString();
}

// A Karta of one root component whose status is `expression`.
std::string DefinitionWithStatus(const std::string& expression) {
  Json definition = Json::parse(R"json({
    "apiVersion": "run.ai/v1alpha1", "kind": "Karta",
    "metadata": {"name": "hostile-example-com-probe-v1"},
    "spec": {"structureDefinition": {"rootComponent": {
      "name": "probe",
      "kind": {"group": "hostile.example.com", "version": "v1", "kind": "Probe"},
      "statusDefinition": {"statusMappings": {"running": [
        {"byExpression": {"expression": "", "expectedResult": "x"}}]}}}}}
  })json");
  definition["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"]
            ["running"][0]["byExpression"]["expression"] = expression;
  return definition.dump();
}

// An object of a hostile definition's kind (definitions.yaml).
std::string HostileObject(const std::string& kind) {
  return Json{{"apiVersion", "hostile.example.com/v1"},
              {"kind", kind},
              {"metadata", {{"name", "bomb"}, {"namespace", "default"}, {"uid", "bomb-uid"}}}}
      .dump();
}

// The demo JobSet with `edit` applied.
std::string Edited(const Json& jobset, const std::function<void(Json&)>& edit) {
  Json copy = jobset;
  edit(copy);
  return copy.dump();
}

// The demo's worker pod template's container limits.
Json& WorkerLimits(Json& jobset) {
  return jobset["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"]
               [0]["resources"]["limits"];
}

Json DemoPod(const std::string& name) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"namespace", "default"},
                {"uid", "pod-" + name},
                {"labels",
                 {{"jobset.sigs.k8s.io/jobset-name", "demo"},
                  {"jobset.sigs.k8s.io/replicatedjob-name", "worker"}}}}},
              {"spec", {{"containers", Json::array({{{"name", "worker"}, {"image", "x"}}})}}}};
}

}  // namespace

const std::string& SeedJobSetJson() {
  static const std::string* jobset = [] {
    absl::StatusOr<std::vector<Json>> seed =
        ReadYamlFile(absl::StrCat(WM_SOURCE_DIR, "/", kSeedFile));
    for (const Json& o : seed.value()) {
      if (o["kind"] == "JobSet") return new std::string(o.dump());
    }
    return new std::string("{}");
  }();
  return *jobset;
}

std::vector<HostileCase> AllCases() {
  const Json jobset = Json::parse(SeedJobSetJson());
  const std::string demo = jobset.dump();
  std::vector<HostileCase> cases;
  auto add = [&](std::string name, std::string method, std::string request, std::vector<Code> codes,
                 std::string mention, absl::Duration bound = kHangBound, Metadata metadata = {}) {
    cases.push_back({std::move(name), kServicePrefix + method, std::move(request),
                     std::move(metadata), std::move(codes), std::move(mention), bound});
  };

  // ---- Not a request at all -------------------------------------------------
  for (const char* method :
       {"ResolveWorkload", "ListWorkloads", "MutatePodSpecs", "GetGangInstructions",
        "WatchWorkloads", "ListDefinitions", "ValidateDefinition"}) {
    // Every method parses its request itself and says why bytes are not one.
    const std::string named =
        absl::StrCat("request is not a valid workloadmap.v1.", method, "Request: ");
    add(absl::StrCat(method, "/garbage"), method, "\xff\xff\xff\xff", kInvalid, named);
    add(absl::StrCat(method, "/truncated_field"), method,
        "\x0a\x7f"
        "abc",
        kInvalid, named + "the field at byte 0 is truncated");
  }

  // ---- Empty messages -------------------------------------------------------
  add("ResolveWorkload/empty", "ResolveWorkload", "", kInvalid, "ref or inline is required");
  add("MutatePodSpecs/empty", "MutatePodSpecs", "", kInvalid, "nothing to change");
  add("GetGangInstructions/empty", "GetGangInstructions", "", kInvalid,
      "pod, workload or inline_pod is required");
  add("ValidateDefinition/empty", "ValidateDefinition", "", kInvalid, "definition_yaml is empty");

  // ---- Class 1: nesting 100,000 deep -----------------------------------------
  const std::string deep_arrays = WithRawSpec(jobset, Nested(kDeepNesting));
  const std::string deep_objects = WithRawSpec(jobset, NestedObjects(kDeepNesting));
  add("ResolveWorkload/inline_spec_nested_arrays", "ResolveWorkload", ResolveInline(deep_arrays),
      kInvalid, "inline.object_json");
  add("ResolveWorkload/inline_spec_nested_objects", "ResolveWorkload", ResolveInline(deep_objects),
      kInvalid, "inline.object_json");
  add("ResolveWorkload/inline_pod_nested", "ResolveWorkload",
      ResolveInline(demo, {WithRawSpec(DemoPod("w-0"), Nested(kDeepNesting))}), kInvalid,
      "inline.pod_json");
  add("MutatePodSpecs/inline_spec_nested", "MutatePodSpecs",
      MutateInline(deep_arrays, [](auto& c) { c.set_scheduler_name("kai-scheduler"); }), kInvalid,
      "inline.object_json");
  add("GetGangInstructions/inline_pod_top_owner_nested", "GetGangInstructions",
      GangInline(DemoPod("w-0").dump(), deep_objects), kInvalid, "inline_pod.top_owner_json");
  add("GetGangInstructions/inline_pod_pod_nested", "GetGangInstructions",
      GangInline(WithRawSpec(DemoPod("w-0"), Nested(kDeepNesting)), demo), kInvalid,
      "inline_pod.pod_json");

  // ---- Class 2: hostile jq ----------------------------------------------------
  // ValidateDefinition compiles (never evaluates): the blacklisted builtins
  // are findings, and what compiles is answered within the bound.
  add("ValidateDefinition/range_1e9", "ValidateDefinition",
      Validate(DefinitionWithStatus("[range(1e9)]")), {Code::OK}, "range");
  add("ValidateDefinition/limit_repeat", "ValidateDefinition",
      Validate(DefinitionWithStatus("[limit(1e8; repeat(1))]")), {Code::OK}, "repeat");
  for (const auto& [name, expression] :
       std::vector<std::pair<std::string, std::string>>{{"infinite_recursion", "def f: 1 + f; f"},
                                                        {"infinite_loop", "def f: f; f"},
                                                        {"string_50MB", "\"x\" * 50000000"}}) {
    add("ValidateDefinition/" + name, "ValidateDefinition",
        Validate(DefinitionWithStatus(expression)), {Code::OK, Code::INVALID_ARGUMENT}, "",
        kEvaluationBound);
  }
  add("ValidateDefinition/parentheses_10000", "ValidateDefinition",
      Validate(DefinitionWithStatus(std::string(10000, '(') + "." + std::string(10000, ')'))),
      {Code::OK, Code::INVALID_ARGUMENT}, "", kEvaluationBound);
  add("ValidateDefinition/not_yaml", "ValidateDefinition", Validate("{[: \x01"), {Code::OK}, "");
  add("ValidateDefinition/non_utf8", "ValidateDefinition", Validate(kNotUtf8), kInvalid,
      "definition_yaml is not valid UTF-8");
  // A finding (as for any YAML error) saying where and what the bound is.
  add("ValidateDefinition/deep_yaml", "ValidateDefinition", Validate(Nested(kDeepNesting)),
      {Code::OK, Code::INVALID_ARGUMENT}, "nesting deeper than");
  // Evaluated: inline objects of the kinds of definitions.yaml.
  for (const char* kind : {"Recursion", "Spin", "HugeString", "Unbounded"}) {
    add(absl::StrCat("ResolveWorkload/evaluate_", kind), "ResolveWorkload",
        ResolveInline(HostileObject(kind)), kExhausted, "statusMappings", kEvaluationBound);
  }

  // ---- Class 4: out-of-range numbers and quantities ------------------------------
  auto worker_replicas = [&](Json value) {
    return ResolveInline(
        Edited(jobset, [&](Json& j) { j["spec"]["replicatedJobs"][1]["replicas"] = value; }));
  };
  add("ResolveWorkload/replicas_int32_max", "ResolveWorkload",
      worker_replicas(std::numeric_limits<int32_t>::max()), kInvalid, "replicas");
  // A scale value the format refuses costs its component only: a partial
  // answer whose component error names the field and the value.
  add("ResolveWorkload/replicas_negative", "ResolveWorkload", worker_replicas(-2), {Code::OK},
      "replica count -2 is negative");
  add("ResolveWorkload/replicas_1e400", "ResolveWorkload",
      ResolveInline(absl::StrReplaceAll(
          Edited(jobset, [](Json& j) { j["spec"]["replicatedJobs"][1]["replicas"] = "@R@"; }),
          {{"\"@R@\"", "1e400"}})),
      // The JSON reader refuses it before any field is read: numbers must
      // fit a double. The message gives its byte offset.
      kInvalid, "number out of range");
  add("ResolveWorkload/replicas_string", "ResolveWorkload", worker_replicas("two"), {Code::OK},
      "\"two\" as an int32 replica count");
  for (const auto& [name, quantity] :
       std::vector<std::pair<std::string, std::string>>{{"negative", "-4"},
                                                        {"1e400", "1e400"},
                                                        {"999999999999Ei", "999999999999Ei"},
                                                        {"not_a_quantity", "lots"}}) {
    add("ResolveWorkload/gpu_" + name, "ResolveWorkload",
        ResolveInline(
            Edited(jobset, [&](Json& j) { WorkerLimits(j)["nvidia.com/gpu"] = quantity; })),
        kInvalid, "nvidia.com/gpu");
  }
  add("GetGangInstructions/top_owner_replicas_negative", "GetGangInstructions",
      GangInline(DemoPod("w-0").dump(),
                 Edited(jobset, [](Json& j) { j["spec"]["replicatedJobs"][1]["replicas"] = -5; })),
      // The pod's assignment names the component its gang would count.
      {Code::OK}, "could not be resolved");

  // ---- Class 5: many objects in one request -------------------------------------
  {
    std::vector<std::string> pods;
    // Twice --max-inline-objects (10,000), and under --max-message-bytes
    // (16 MiB, 100,000 of them are 26 MB), so the cap is what refuses them.
    for (int i = 0; i < 20000; ++i) pods.push_back(DemoPod(absl::StrCat("w-", i)).dump());
    add("ResolveWorkload/20000_inline_pods", "ResolveWorkload", ResolveInline(demo, pods),
        {Code::INVALID_ARGUMENT, Code::RESOURCE_EXHAUSTED}, "pod_json", kManyObjectsBound);
  }
  add("ResolveWorkload/over_max_message_bytes", "ResolveWorkload",
      ResolveInline(demo, {std::string(17 << 20, ' ')}), {Code::RESOURCE_EXHAUSTED}, "");

  // ---- Class 6: MutatePodSpecs with invalid changes ------------------------------
  auto resources = [](const std::string& json) {
    return [json](v1::PodTemplateChange& c) {
      (*c.mutable_container_resources())["worker"] = FromJson<google::protobuf::Struct>(json);
    };
  };
  add("MutatePodSpecs/quantity_lots", "MutatePodSpecs",
      MutateRef(resources(R"({"requests": {"cpu": "lots"}})")), kInvalid, "container_resources");
  add("MutatePodSpecs/quantity_negative", "MutatePodSpecs",
      MutateRef(resources(R"({"limits": {"nvidia.com/gpu": "-3"}})")), kInvalid,
      "container_resources");
  add("MutatePodSpecs/requests_not_an_object", "MutatePodSpecs",
      MutateRef(resources(R"({"requests": 5})")), kInvalid, "container_resources");
  add("MutatePodSpecs/unknown_resources_key", "MutatePodSpecs",
      MutateRef(resources(R"({"requets": {"cpu": "1"}})")), kInvalid, "container_resources");
  add("MutatePodSpecs/invalid_label_key", "MutatePodSpecs",
      MutateRef([](auto& c) { (*c.mutable_labels())["bad key!/"] = "v"; }), kInvalid, "labels");
  add("MutatePodSpecs/invalid_label_value", "MutatePodSpecs",
      MutateRef([](auto& c) { (*c.mutable_labels())["team"] = std::string(64, 'x') + " !"; }),
      kInvalid, "labels");
  add("MutatePodSpecs/huge_label_key", "MutatePodSpecs",
      MutateRef([](auto& c) { (*c.mutable_labels())[std::string(1 << 20, 'k')] = "v"; }), kInvalid,
      "labels");
  add("MutatePodSpecs/invalid_node_selector_key", "MutatePodSpecs",
      MutateRef([](auto& c) { (*c.mutable_node_selector())["-bad-"] = "v"; }), kInvalid,
      "node_selector");
  add("MutatePodSpecs/toleration_not_an_object", "MutatePodSpecs", MutateRef([](auto& c) {
        *c.mutable_tolerations() = FromJson<google::protobuf::ListValue>("[5]");
      }),
      kInvalid, "tolerations");
  add("MutatePodSpecs/toleration_bad_operator", "MutatePodSpecs", MutateRef([](auto& c) {
        *c.mutable_tolerations() = FromJson<google::protobuf::ListValue>(
            R"([{"key": "k", "operator": "Sometimes", "effect": 7}])");
      }),
      kInvalid, "tolerations");
  add("MutatePodSpecs/affinity_wrong_type", "MutatePodSpecs", MutateRef([](auto& c) {
        *c.mutable_affinity() = FromJson<google::protobuf::Struct>(R"({"nodeAffinity": "x"})");
      }),
      kInvalid, "affinity");
  add("MutatePodSpecs/pod_template_wrong_type", "MutatePodSpecs", MutateRef([](auto& c) {
        *c.mutable_pod_template() = FromJson<google::protobuf::Struct>(R"({"spec": [1, 2]})");
      }),
      kInvalid, "pod_template");
  add("MutatePodSpecs/unknown_component", "MutatePodSpecs", MutateRef([](auto& c) {
        c.set_component("nope");
        c.set_scheduler_name("kai-scheduler");
      }),
      kInvalid, "component");
  add("MutatePodSpecs/huge_scheduler_name", "MutatePodSpecs",
      MutateRef([](auto& c) { c.set_scheduler_name(std::string(1 << 20, 's')); }), kInvalid,
      "scheduler_name");
  add(
      "MutatePodSpecs/apply_inline", "MutatePodSpecs",
      [&] {
        v1::MutatePodSpecsRequest request;
        request.mutable_inline_()->set_object_json(demo);
        request.add_changes()->set_scheduler_name("x");
        request.set_apply(true);
        return request.SerializeAsString();
      }(),
      kInvalid, "apply");
  add(
      "MutatePodSpecs/suspend_out_of_enum", "MutatePodSpecs",
      [&] {
        v1::MutatePodSpecsRequest request;
        *request.mutable_ref() = DemoRef();
        request.set_suspend(static_cast<v1::MutatePodSpecsRequest::Suspend>(77));
        return request.SerializeAsString();
      }(),
      kInvalid, "suspend");

  // ---- Class 7: ListWorkloads and WatchWorkloads arguments -----------------------
  add("ListWorkloads/selector_200KB_invalid", "ListWorkloads",
      List([](auto& r) { r.set_label_selector(std::string(200 << 10, '!')); }), kInvalid,
      "label_selector");
  add("ListWorkloads/selector_1MB_key", "ListWorkloads",
      List([](auto& r) { r.set_label_selector(std::string(1 << 20, 'k') + "=v"); }), kInvalid,
      "label_selector");
  for (const auto& [name, token] :
       std::vector<std::pair<std::string, std::string>>{{"minus_one", "-1"},
                                                        {"huge_number", std::string(40, '9')},
                                                        {"base64_zeros", std::string(4096, 'A')},
                                                        {"1MB", std::string(1 << 20, 'A')}}) {
    add("ListWorkloads/page_token_" + name, "ListWorkloads",
        List([&](auto& r) { r.set_page_token(token); }), kInvalid, "page_token");
  }
  add("ListWorkloads/page_size_negative", "ListWorkloads",
      List([](auto& r) { r.set_page_size(-1); }), kInvalid, "page_size");
  add("ListWorkloads/unknown_cluster", "ListWorkloads",
      List([](auto& r) { r.set_cluster("no-such-cluster"); }),
      {Code::NOT_FOUND, Code::INVALID_ARGUMENT}, "no-such-cluster");
  add("ListWorkloads/huge_cluster_name", "ListWorkloads",
      List([](auto& r) { r.set_cluster(std::string(1 << 20, 'c')); }),
      {Code::NOT_FOUND, Code::INVALID_ARGUMENT}, "cluster");
  add("ListWorkloads/non_utf8_namespace", "ListWorkloads",
      List([&](auto& r) { r.set_namespace_(kNotUtf8); }), kInvalid, "namespace is not valid UTF-8");
  add("ListWorkloads/unknown_kind", "ListWorkloads",
      List([](auto& r) { r.add_kinds("NoSuchKind"); }), kInvalid, "NoSuchKind");
  {
    v1::WatchWorkloadsRequest request;
    request.set_resume_revision(std::numeric_limits<uint64_t>::max());
    add("WatchWorkloads/resume_from_the_future", "WatchWorkloads", request.SerializeAsString(),
        {Code::INVALID_ARGUMENT, Code::OUT_OF_RANGE}, "resume_revision");
  }
  {
    v1::WatchWorkloadsRequest request;
    request.set_label_selector(std::string(200 << 10, '!'));
    add("WatchWorkloads/selector_200KB_invalid", "WatchWorkloads", request.SerializeAsString(),
        kInvalid, "label_selector");
  }
  {
    v1::WatchWorkloadsRequest request;
    request.set_cluster("no-such-cluster");
    add("WatchWorkloads/unknown_cluster", "WatchWorkloads", request.SerializeAsString(),
        {Code::NOT_FOUND, Code::INVALID_ARGUMENT}, "no-such-cluster");
  }

  // ---- Class 8: strings, types and names ---------------------------------------
  {
    v1::ObjectRef ref = DemoRef();
    ref.set_name(kNotUtf8);
    add("ResolveWorkload/non_utf8_name", "ResolveWorkload", ResolveRef(ref), kInvalid,
        "ref.name is not valid UTF-8");
    ref = DemoRef();
    ref.set_name(std::string(1 << 20, 'n'));
    add("ResolveWorkload/huge_name", "ResolveWorkload", ResolveRef(ref),
        {Code::INVALID_ARGUMENT, Code::NOT_FOUND}, "name");
    ref = DemoRef();
    ref.set_kind(std::string(1 << 20, 'K'));
    add("ResolveWorkload/huge_kind", "ResolveWorkload", ResolveRef(ref),
        {Code::INVALID_ARGUMENT, Code::NOT_FOUND, Code::FAILED_PRECONDITION}, "kind");
    ref = DemoRef();
    ref.set_cluster("no-such-cluster");
    add("ResolveWorkload/unknown_cluster", "ResolveWorkload", ResolveRef(ref),
        {Code::NOT_FOUND, Code::INVALID_ARGUMENT}, "no-such-cluster");
    ref = DemoRef();
    ref.clear_name();
    add("ResolveWorkload/no_name", "ResolveWorkload", ResolveRef(ref), kInvalid,
        "ref: name is required");
  }
  {
    v1::ResolveWorkloadRequest request;
    *request.mutable_ref() = DemoRef();
    request.set_pod_limit(-1);
    add("ResolveWorkload/pod_limit_negative", "ResolveWorkload", request.SerializeAsString(),
        kInvalid, "pod_limit");
  }
  add("ResolveWorkload/inline_non_utf8_json", "ResolveWorkload",
      ResolveInline("{\"kind\": \"" + kNotUtf8 + "\"}"), kInvalid,
      "inline.object_json is not valid UTF-8");
  add("ResolveWorkload/inline_not_json", "ResolveWorkload", ResolveInline("{apiVersion: v1"),
      kInvalid, "inline.object_json");
  add("ResolveWorkload/inline_array", "ResolveWorkload", ResolveInline("[1, 2]"), kInvalid,
      "inline.object_json");
  add("ResolveWorkload/inline_kind_not_a_string", "ResolveWorkload",
      ResolveInline(Edited(jobset, [](Json& j) { j["kind"] = 5; })), kInvalid,
      "inline.object_json");
  add("ResolveWorkload/inline_metadata_not_an_object", "ResolveWorkload",
      ResolveInline(Edited(jobset, [](Json& j) { j["metadata"] = "x"; })), kInvalid, "metadata");
  add("ResolveWorkload/inline_replicated_jobs_not_a_list", "ResolveWorkload",
      // A partial answer: the component whose expression met the malformed
      // value names its definition field, with jq's reason ("Cannot iterate
      // over string"); the status is still resolved.
      ResolveInline(Edited(jobset, [](Json& j) { j["spec"]["replicatedJobs"] = "x"; })), {Code::OK},
      "childComponents[0].instanceIdPath");
  add("ResolveWorkload/inline_unknown_kind", "ResolveWorkload",
      ResolveInline(Edited(jobset, [](Json& j) { j["kind"] = "NoSuchKind"; })),
      {Code::FAILED_PRECONDITION}, "NoSuchKind");
  add("ResolveWorkload/inline_pod_not_json", "ResolveWorkload", ResolveInline(demo, {"{{{"}),
      kInvalid, "inline.pod_json");
  add("GetGangInstructions/inline_pod_not_json", "GetGangInstructions", GangInline("{", demo),
      kInvalid, "inline_pod.pod_json");
  add("GetGangInstructions/inline_pod_empty_owner", "GetGangInstructions",
      GangInline(DemoPod("w-0").dump(), ""), kInvalid, "inline_pod.top_owner_json");
  {
    v1::GetGangInstructionsRequest request;
    request.mutable_pod()->set_name(std::string(1 << 20, 'p'));
    request.mutable_pod()->set_namespace_("default");
    add("GetGangInstructions/huge_pod_name", "GetGangInstructions", request.SerializeAsString(),
        {Code::INVALID_ARGUMENT, Code::NOT_FOUND}, "name");
  }
  add("MutatePodSpecs/non_utf8_scheduler_name", "MutatePodSpecs",
      MutateRef([&](auto& c) { c.set_scheduler_name(kNotUtf8); }), kInvalid,
      "scheduler_name is not valid UTF-8");

  // ---- Metadata the daemon does not read: the call is answered as without --------
  {
    Metadata binary = {{"x-hostile-bin", std::string("\0\xff\x80\r\n\0", 6)},
                       {"x-hostile-text", std::string(4096, '~')}};
    add("ResolveWorkload/metadata_binary_and_4KiB", "ResolveWorkload", ResolveRef(DemoRef()),
        {Code::OK}, "demo", kHangBound, std::move(binary));
    Metadata many;
    for (int i = 0; i < 50; ++i) many.emplace_back(absl::StrCat("x-hostile-", i), "v");
    add("ListWorkloads/metadata_50_entries", "ListWorkloads", List([](auto&) {}), {Code::OK},
        "demo", kHangBound, std::move(many));
  }
  return cases;
}

std::vector<HttpCase> HttpCases() {
  const std::string huge_header = "X-Filler: " + std::string(64 << 10, 'h') + "\r\n";
  return {
      {"healthz", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", {200}, kHangBound},
      {"garbage_request_line", "GARBAGE\r\n\r\n", {400}, kHangBound},
      {"no_version", "GET /healthz\r\n\r\n", {400}, kHangBound},
      {"nul_in_request_line",
       std::string("GET /heal\0thz HTTP/1.1\r\n\r\n", 26),
       {400, 404},
       kHangBound},
      {"binary_noise",
       std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15),
       {400},
       kHangBound},
      {"non_utf8_path", "GET /\xff\xfe\xc0\xaf HTTP/1.1\r\n\r\n", {400, 404}, kHangBound},
      {"non_utf8_query", "GET /debug/cache?\xff\xfe=\x80 HTTP/1.1\r\n\r\n", {200, 400}, kHangBound},
      {"unknown_path", "GET /no/such/path HTTP/1.1\r\n\r\n", {404}, kHangBound},
      {"path_traversal", "GET /../../etc/passwd HTTP/1.1\r\n\r\n", {400, 404}, kHangBound},
      {"post_metrics",
       "POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
       {405},
       kHangBound},
      {"huge_header_healthz",
       "GET /healthz HTTP/1.1\r\n" + huge_header + "\r\n",
       {431},
       kHangBound},
      {"huge_header_metrics",
       "GET /metrics HTTP/1.1\r\n" + huge_header + "\r\n",
       {431},
       kHangBound},
      {"request_line_1MB", "GET /" + std::string(1 << 20, 'a'), {414}, kHangBound},
      {"target_over_2KiB_readyz",
       "GET /readyz?" + std::string(7000, 'q') + " HTTP/1.1\r\n\r\n",
       {414},
       kHangBound},
      {"debug_cache", "GET /debug/cache HTTP/1.1\r\n\r\n", {200}, kHangBound},
      {"readyz_head", "HEAD /readyz HTTP/1.1\r\n\r\n", {200}, kHangBound},
      // The JSON API and the page (docs/http-api.md).
      {"api_list", "GET /api/v1/workloads HTTP/1.1\r\n\r\n", {200}, kHangBound},
      {"api_unknown_parameter",
       "GET /api/v1/workloads?namespce=x HTTP/1.1\r\n\r\n",
       {400},
       kHangBound},
      {"api_bad_escape", "GET /api/v1/workloads?namespace=%zz HTTP/1.1\r\n\r\n", {400}, kHangBound},
      {"api_control_character",
       "GET /api/v1/workloads?namespace=a%00b HTTP/1.1\r\n\r\n",
       {400},
       kHangBound},
      {"api_page_size_huge",
       "GET /api/v1/workloads?pageSize=99999999999999 HTTP/1.1\r\n\r\n",
       {400},
       kHangBound},
      {"api_workload_name_too_long",
       "GET /api/v1/namespaces/default/workloads/JobSet/" + std::string(1500, 'n') +
           " HTTP/1.1\r\n\r\n",
       {400},
       kHangBound},
      {"api_workload_traversal",
       "GET /api/v1/namespaces/..%2F..%2Fetc/workloads/JobSet/passwd HTTP/1.1\r\n\r\n",
       {400, 404},
       kHangBound},
      {"api_unknown_path", "GET /api/v1/secrets HTTP/1.1\r\n\r\n", {404}, kHangBound},
      {"api_events_bad_last_event_id",
       "GET /api/v1/events HTTP/1.1\r\nLast-Event-ID: -1\r\n\r\n",
       {400},
       kHangBound},
      {"api_events_head", "HEAD /api/v1/events HTTP/1.1\r\n\r\n", {200}, kHangBound},
      {"page_head", "HEAD / HTTP/1.1\r\n\r\n", {200}, kHangBound},
  };
}

}  // namespace wm::hostile
