#ifndef WM_SERVER_WEB_WORKLOAD_PATH_H_
#define WM_SERVER_WEB_WORKLOAD_PATH_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::web {

// What a workload URL names, below the API's root ("/api/v1/"):
//   namespaces/{namespace}/workloads/{kind}/{name}[/gang]
//   workloads/{kind}/{name}[/gang]          (a cluster-scoped workload)
// Each segment percent-decoded; {kind} is any name kubectl takes for the
// kind: "JobSet" (a kind: `ref.kind`) or "jobsets", "jobset" (a resource:
// `ref.resource`), for the service to resolve.
struct WorkloadPath {
  workloadmap::v1::ObjectRef ref;
  bool gang = false;
};

// NotFound (naming the shapes above) for a path of another shape;
// InvalidArgument for a malformed escape or an empty segment.
absl::StatusOr<WorkloadPath> ParseWorkloadPath(absl::string_view below_root);

}  // namespace wm::web

#endif  // WM_SERVER_WEB_WORKLOAD_PATH_H_
