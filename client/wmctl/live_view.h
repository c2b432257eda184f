#ifndef WM_CLIENT_WMCTL_LIVE_VIEW_H_
#define WM_CLIENT_WMCTL_LIVE_VIEW_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/common/json.h"
#include "workloadmap/v1/service.pb.h"

namespace wm::wmctl {

struct GetOptions {
  bool all_namespaces = false;  // adds NAMESPACE first
  bool wide = false;            // adds CLUSTER and DEFINITION last
  absl::Time now;               // for AGE
};

// `wmctl get`'s table: [NAMESPACE] NAME TYPE STATUS COMPONENTS GPU AGE
// [CLUSTER DEFINITION], columns three spaces apart.
std::string GetTable(const std::vector<workloadmap::v1::WorkloadSummary>& rows,
                     const GetOptions& o);

// One row of `wmctl get -o json|yaml`.
Json GetRowJson(const workloadmap::v1::WorkloadSummary& row);

// "leader 1/1, worker 2/2": instance id (else component name) and
// ready/desired per row of the summary; "<none>" without components.
std::string ComponentsCell(const workloadmap::v1::WorkloadSummary& row);

// The matched statuses comma-joined; "Undefined" when none matched, "Error"
// when the workload could not be resolved.
std::string StatusCell(const workloadmap::v1::WorkloadSummary& row);

// `wmctl gang POD`: the pod, its top owner, its pod group with the
// subgroups, and its assignment.
std::string GangText(const std::string& namespace_, const std::string& pod,
                     const workloadmap::v1::GetGangInstructionsResponse& r);
Json GangJson(const std::string& namespace_, const std::string& pod,
              const workloadmap::v1::GetGangInstructionsResponse& r);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_LIVE_VIEW_H_
