#include "server/rpc/internal/list_filter.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/user_text.h"
#include "server/rpc/internal/targets.h"

namespace wm::rpc::internal {

using ::wm::index::Cluster;
using ::wm::index::WorkloadIndex;
using ::wm::index::WorkloadView;

absl::Status NotReadyError() {
  return absl::UnavailableError(
      "the daemon is still syncing its caches and resolving workloads; retry (its gRPC health "
      "status turns SERVING when it is done)");
}

bool ListFilter::Matches(const WorkloadIndex& index, KindNamesCache& kind_names,
                         const WorkloadView& v) const {
  if (!cluster.empty() && v.id.cluster != cluster) return false;
  if (!namespace_.empty() && v.namespace_ != namespace_) return false;
  if (!kinds.empty()) {
    const Cluster* c = index.FindCluster(v.id.cluster);
    if (c == nullptr) return false;
    std::shared_ptr<const KindNames> names = kind_names.For(*c);
    bool any = false;
    for (const std::string& k : kinds) any = any || names->Matches(v.id.gvk, k);
    if (!any) return false;
  }
  if (!statuses.empty()) {
    bool any = false;
    for (const std::string& s : v.summary.matched_statuses()) any = any || statuses.count(s);
    if (!any) return false;
  }
  return selector.Matches(v.labels);
}

// A filter from a request's fields. A kind that no served cluster knows by
// that name is refused, as kubectl refuses `get nosuchkind`: it is a typo,
// not a filter that happens to match nothing.
absl::StatusOr<ListFilter> MakeFilter(
    const WorkloadIndex& index, KindNamesCache& kind_names, const std::string& cluster,
    const std::string& namespace_, const google::protobuf::RepeatedPtrField<std::string>& kinds,
    const google::protobuf::RepeatedPtrField<std::string>& statuses, const std::string& selector) {
  ListFilter f;
  if (!cluster.empty()) {
    auto c = PickCluster(index, cluster);
    if (!c.ok()) return c.status();
  }
  f.cluster = cluster;
  f.namespace_ = namespace_;
  for (int i = 0; i < kinds.size(); ++i) {
    bool known = false;
    for (const Cluster* c : index.clusters()) {
      if (!cluster.empty() && c->name() != cluster) continue;
      known = known || kind_names.For(*c)->Names(kinds[i]);
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("kinds[", i, "]: ", QuoteUserText(kinds[i]),
                       " names no kind the daemon serves (a kind, group/Kind, plural or singular "
                       "resource name, as kubectl takes them)"));
    }
  }
  f.kinds.assign(kinds.begin(), kinds.end());
  static const std::set<std::string> kKnown = {"Resuming",     "Suspending", "Suspended",
                                               "Running",      "Failed",     "Completed",
                                               "Initializing", "Degraded",   "Undefined"};
  for (const std::string& s : statuses) {
    if (!kKnown.count(s)) {
      return absl::InvalidArgumentError(absl::StrCat("statuses: unknown status ", QuoteUserText(s),
                                                     " (one of ", absl::StrJoin(kKnown, ", "),
                                                     ")"));
    }
    f.statuses.insert(s);
  }
  auto parsed = LabelSelector::Parse(selector);
  if (!parsed.ok()) return parsed.status();
  f.selector = *std::move(parsed);
  return f;
}

}  // namespace wm::rpc::internal
