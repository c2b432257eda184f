#ifndef WM_SERVER_RESOLUTION_RESOLVER_H_
#define WM_SERVER_RESOLUTION_RESOLVER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/definitions/compiled_definition.h"
#include "server/expressions/engine.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::resolution {

// What is known of one workload: the root object, and optionally pods and
// the objects between them and the root (Jobs, ReplicaSets, ...).
struct WorkloadInput {
  const Json* object = nullptr;
  // Candidate pods. A pod counts when its controller ownerReference chain
  // (through `owners` and the other pods, at most 8 steps) reaches the
  // root's UID; when the root has no UID (a manifest from a file) every
  // candidate counts. A Pod root counts as its own pod.
  std::vector<const Json*> pods;
  std::vector<const Json*> owners;
};

struct ResolveOptions {
  bool include_pods = true;
  // Pods listed per component instance, unhealthy first; 0 lists all.
  // Counts always cover every pod.
  int pod_limit = 0;
  bool include_gang = true;
  std::string cluster;
};

// Resolves a workload through its definition: status, component tree with
// scale, pods (attributed by owner chain, then type, instance and replica
// selectors), nodes, resource requests at desired scale and gang
// instructions. An expression of a component that fails makes a partial
// answer, not a failure: that component carries the error (field path and
// message, workloadmap.v1.Component.error; what else it holds is
// documented there) and everything else is resolved. Fails when the status
// expressions fail or a total overflows (the error names the definition
// field or the component); gang problems are reported per pod.
absl::StatusOr<workloadmap::v1::ResolvedWorkload> ResolveWorkload(
    const definitions::CompiledDefinition& def, expressions::Engine& engine,
    const WorkloadInput& input, const ResolveOptions& options = {});

// The same answer built in `out`, on `out`'s protobuf arena when it has
// one: an answer has a message and several strings per pod, which an arena
// allocates by bumping a pointer and frees at once. For callers that
// discard the answer with its arena (an inline call's response); the
// index's views keep heap messages, which hold no arena's unused block.
// REQUIRES: `out` is empty. On failure `out` holds a partial answer to
// discard.
absl::Status ResolveWorkloadInto(const definitions::CompiledDefinition& def,
                                 expressions::Engine& engine, const WorkloadInput& input,
                                 const ResolveOptions& options,
                                 workloadmap::v1::ResolvedWorkload& out);

// The errors of the components an answer could not resolve (it is then
// partial), depth first, each "<component> <field path>: <message>"; empty
// for a whole answer.
std::vector<std::string> ComponentErrors(const workloadmap::v1::ResolvedWorkload& workload);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_RESOLVER_H_
