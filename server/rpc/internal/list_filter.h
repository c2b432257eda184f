// The filters of ListWorkloads and WatchWorkloads, as the request's fields
// give them. Internal to the rpc layer.
#ifndef WM_SERVER_RPC_INTERNAL_LIST_FILTER_H_
#define WM_SERVER_RPC_INTERNAL_LIST_FILTER_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "server/index/workload_index.h"
#include "server/rpc/kind_names.h"
#include "server/rpc/label_selector.h"

namespace wm::rpc::internal {

// The answer of the listing methods before the first sync and resolution.
absl::Status NotReadyError();

// What ListWorkloads and WatchWorkloads keep: the views of a cluster, a
// namespace, any of some kinds, any of some statuses, and a label selector
// (empty fields match everything).
struct ListFilter {
  std::string cluster, namespace_;
  std::vector<std::string> kinds;
  std::set<std::string> statuses;
  LabelSelector selector;

  bool Matches(const index::WorkloadIndex& index, KindNamesCache& kind_names,
               const index::WorkloadView& v) const;
};

// A filter from a request's fields. A kind that no served cluster knows by
// that name is refused, as kubectl refuses `get nosuchkind`: it is a typo,
// not a filter that happens to match nothing.
absl::StatusOr<ListFilter> MakeFilter(
    const index::WorkloadIndex& index, KindNamesCache& kind_names, const std::string& cluster,
    const std::string& namespace_, const google::protobuf::RepeatedPtrField<std::string>& kinds,
    const google::protobuf::RepeatedPtrField<std::string>& statuses, const std::string& selector);

}  // namespace wm::rpc::internal

#endif  // WM_SERVER_RPC_INTERNAL_LIST_FILTER_H_
