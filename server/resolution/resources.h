#ifndef WM_SERVER_RESOLUTION_RESOURCES_H_
#define WM_SERVER_RESOLUTION_RESOURCES_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/json.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::resolution {

// Resource amounts by name, in thousandths of a unit (exact for every
// Kubernetes quantity that matters; converted for reporting at the end),
// sorted by name. A workload names two to five resources and a resolution
// sums them at every pod, instance and component: held inline, with names
// viewed rather than copied, a sum allocates nothing.
// REQUIRES: the names outlive the amounts. They are views of the keys of
// the pod spec (or fragmented spec) read, or of string literals; a
// resolution's amounts live no longer than its inputs and component tree.
class Resources {
 public:
  using value_type = std::pair<absl::string_view, int64_t>;
  using const_iterator = absl::InlinedVector<value_type, 4>::const_iterator;

  // The amount of `name`, inserted as 0 when absent.
  int64_t& operator[](absl::string_view name);
  // The amount of `name`, or null when absent.
  const int64_t* Find(absl::string_view name) const;

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }

 private:
  absl::InlinedVector<value_type, 4> entries_;  // sorted by name, each name once
};

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
