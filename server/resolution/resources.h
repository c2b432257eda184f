#ifndef WM_SERVER_RESOLUTION_RESOURCES_H_
#define WM_SERVER_RESOLUTION_RESOURCES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::resolution {

// Resource amounts by name, in thousandths of a unit (exact for every
// Kubernetes quantity that matters; converted for reporting at the end).
// Looked up by string_view too.
using Resources = std::map<std::string, int64_t, std::less<>>;

// The request of one pod made from `pod_spec`, as the scheduler and
// upstream's describe compute it: per resource each container's request,
// else its limit; regular containers plus restartable (sidecar) init
// containers summed, then the max with the largest ordinary init container;
// a pod-level `resources` (request, else limit) replaces the containers'
// cpu/memory total; `overhead` on top. A value that is not a quantity, a
// negative one, or a total beyond int64 thousandths is an error naming its
// field ("containers[0].resources.requests.cpu: ...").
absl::StatusOr<Resources> PodSpecRequests(const Json& pod_spec);

// Fragmented pod spec values: the sum of `containers` and `container`; if
// that is all zero, `resources`.
absl::StatusOr<Resources> FragmentedRequests(const Json& fragmented);

// into += r × factor, failing (naming the resource and the operation) where
// that leaves int64 thousandths.
absl::Status AddScaled(Resources& into, const Resources& r, int64_t factor);

// Writes `r` as reported values: cpu in millicores, everything else in
// whole units rounded up. Zero amounts are left out.
void ExportResources(const Resources& r, workloadmap::v1::ResourceList* out);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_RESOURCES_H_
