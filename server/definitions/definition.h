#ifndef WM_SERVER_DEFINITIONS_DEFINITION_H_
#define WM_SERVER_DEFINITIONS_DEFINITION_H_

// The Workload Map definition (`apiVersion: run.ai/v1alpha1, kind: Karta`)
// as typed C++ values. Field names follow the format; every jq expression is
// kept as its source text (see compiled_definition.h for the compiled form).

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/common/gvk.h"
#include "server/common/json.h"

namespace wm::definitions {

// Pod fields scattered over a custom resource; each is an optional jq path.
struct FragmentedPodSpec {
  // Order of the sub-fields as upstream writes them.
  enum Field {
    kSchedulerName,
    kPriorityClassName,
    kImage,
    kLabels,
    kAnnotations,
    kResources,
    kPodAffinity,
    kNodeAffinity,
    kContainer,
    kResourceClaims,
    kContainers,
    kFieldCount
  };
  std::array<std::optional<std::string>, kFieldCount> paths;

  // The format's key for a field ("schedulerNamePath") and the name of the
  // extracted value ("schedulerName").
  static const char* PathKey(Field f);
  static const char* ValueKey(Field f);
};

struct SpecDefinition {
  std::optional<std::string> pod_template_spec_path;
  std::optional<std::string> pod_spec_path;
  std::optional<std::string> metadata_path;
  std::optional<FragmentedPodSpec> fragmented;

  // One of the three pod-bearing shapes is set (metadataPath alone is not).
  bool HasPodDefinition() const { return pod_template_spec_path || pod_spec_path || fragmented; }
};

struct ScaleDefinition {
  std::optional<std::string> replicas_path;
  std::optional<std::string> min_replicas_path;
  std::optional<std::string> max_replicas_path;
};

struct ExpectedCondition {
  std::string type;
  std::string status;  // compared only when non-empty
  std::string reason;  // compared only when non-empty
};

struct ByExpression {
  std::string expression;
  std::string expected_result;
};

// AND of whatever is set; a matcher with nothing set always matches.
struct StatusMatcher {
  std::string by_phase;
  std::vector<ExpectedCondition> by_conditions;
  std::optional<ByExpression> by_expression;
};

// The status vocabulary, in upstream's fixed evaluation order; Undefined is
// the "nothing matched" value and is never mapped.
enum class WorkloadStatus {
  kResuming,
  kSuspending,
  kSuspended,
  kRunning,
  kFailed,
  kCompleted,
  kInitializing,
  kDegraded,
  kUndefined,
};
constexpr int kMappedStatusCount = 8;
const char* StatusName(WorkloadStatus s);        // "Running"
const char* StatusMappingKey(WorkloadStatus s);  // "running"

struct ConditionsDefinition {
  std::string path;
  std::string type_field_name = "type";
  std::string status_field_name = "status";
  std::string message_field_name = "message";
  std::string reason_field_name = "reason";
};

struct StatusDefinition {
  std::optional<std::string> phase_path;
  std::optional<ConditionsDefinition> conditions;
  // Indexed by WorkloadStatus (the eight mapped ones); empty = not mapped.
  std::array<std::vector<StatusMatcher>, kMappedStatusCount> mappings;
};

struct SuspendAction {
  std::string path;
  // JSON text of the value to assign ("true", "\"Suspended\"", "null").
  std::string value;
};

struct SuspendDefinition {
  std::vector<SuspendAction> suspend_actions;
  std::vector<SuspendAction> resume_actions;
};

struct ComponentTypeSelector {
  std::optional<std::string> key_path;
  std::optional<std::string> value;
  std::map<std::string, std::string> match_labels;
};

struct PodSelector {
  std::optional<ComponentTypeSelector> component_type_selector;
  // componentInstanceSelector.idPath
  std::optional<std::string> instance_id_path;
  // replicaSelector.keyPath
  std::optional<std::string> replica_key_path;
};

struct ComponentDefinition {
  std::string name;
  std::optional<Gvk> kind;  // absent: logical component
  std::string owner_ref;    // parent component; empty for the root
  std::optional<SpecDefinition> spec;
  std::optional<ScaleDefinition> scale;
  std::optional<StatusDefinition> status;
  std::optional<SuspendDefinition> suspend;
  std::optional<std::string> instance_id_path;
  std::optional<PodSelector> pod_selector;

  bool HasPodDefinition() const { return spec && spec->HasPodDefinition(); }
};

struct Topology {
  std::string topology_name;
  std::string required_topology_level;
  std::string preferred_topology_level;
};

// Alpha gang form: gangScheduling.podGroups[].
struct PodGroupMember {
  std::string component_name;
  std::vector<std::string> group_by_key_paths;
  std::vector<std::string> filters;
};
struct PodGroupsEntry {
  std::string name;
  std::vector<PodGroupMember> members;
};

// Current gang form: gangScheduling.podGroup.
struct SubGroupDefinition {
  std::string component_name;
  std::optional<Topology> topology;
};
struct PodGroupDefinition {
  std::string name;
  std::vector<SubGroupDefinition> sub_groups;
  std::optional<Topology> topology;
};

struct GangScheduling {
  std::vector<PodGroupsEntry> pod_groups;
  std::optional<PodGroupDefinition> pod_group;

  bool empty() const { return pod_groups.empty() && !pod_group; }
};

// Where a definition was loaded from. Cluster definitions override catalog
// and file definitions for the same root GVK.
enum class Origin { kCatalog, kFile, kCluster };
const char* OriginName(Origin o);

struct Definition {
  std::string name;  // metadata.name
  Origin origin = Origin::kFile;
  std::string source;  // file path, "catalog", or the cluster object's name
  ComponentDefinition root;
  std::vector<ComponentDefinition> children;
  std::vector<Gvk> additional_child_kinds;
  GangScheduling gang;
  // The object as read, with CRD defaults applied (for -o json/yaml).
  Json object;
};

}  // namespace wm::definitions

#endif  // WM_SERVER_DEFINITIONS_DEFINITION_H_
