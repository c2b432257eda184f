// ListWorkloads: the index's views, filtered, newest first, in pages.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/rpc/internal/list_filter.h"
#include "server/rpc/page_token.h"
#include "server/rpc/service.h"

namespace wm::rpc {

namespace v1 = workloadmap::v1;
using internal::MakeFilter;
using internal::NotReadyError;
using ::wm::index::WorkloadView;

namespace {

// Newest first; ties by cluster, namespace, kind and name.
std::string SortKey(const WorkloadView& v) {
  return absl::StrCat(v.creation_timestamp, "\x1f", v.id.cluster, "\x1f", v.namespace_, "\x1f",
                      v.id.gvk.group, "/", v.id.gvk.kind, "\x1f", v.name);
}

bool Newer(const std::string& a, const std::string& b) {
  // Timestamps are RFC 3339 in UTC with a fixed width, so they sort as text;
  // the rest of the key breaks ties in ascending order.
  std::string ta = a.substr(0, a.find('\x1f')), tb = b.substr(0, b.find('\x1f'));
  if (ta != tb) return ta > tb;
  return a < b;
}

int64_t AgeSeconds(const std::string& timestamp, absl::Time now) {
  absl::Time created;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, timestamp, &created, &error)) return 0;
  return absl::ToInt64Seconds(now - created);
}

}  // namespace

grpc::ServerUnaryReactor* WorkloadMapService::ServeListWorkloads(
    const UnaryCall& call, const v1::ListWorkloadsRequest* request,
    v1::ListWorkloadsResponse* response) {
  return RunHere(call, "ListWorkloads", [&]() -> absl::Status {
    if (!ready_) return NotReadyError();
    if (request->page_size() < 0) return absl::InvalidArgumentError("page_size is negative");
    int page_size = request->page_size() == 0 ? 100 : request->page_size();
    page_size = std::min(page_size, options_.max_page_size);
    auto filter = MakeFilter(index_, kind_names_, request->cluster(), request->namespace_(),
                             request->kinds(), request->statuses(), request->label_selector());
    if (!filter.ok()) return filter.status();
    std::string after;
    if (!request->page_token().empty()) {
      auto key = DecodePageToken(request->page_token());
      if (!key.ok()) return key.status();
      after = *std::move(key);
    }
    uint64_t revision = index_.revision();
    std::vector<std::pair<std::string, std::shared_ptr<const WorkloadView>>> rows;
    for (auto& view : index_.List()) {
      if (!filter->Matches(index_, kind_names_, *view)) continue;
      std::string key = SortKey(*view);
      if (!after.empty() && !Newer(after, key)) continue;
      rows.emplace_back(std::move(key), std::move(view));
    }
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return Newer(a.first, b.first); });
    absl::Time now = absl::Now();
    for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(page_size); ++i) {
      v1::WorkloadSummary* row = response->add_workloads();
      *row = rows[i].second->summary;
      row->set_age_seconds(AgeSeconds(row->creation_timestamp(), now));
    }
    if (rows.size() > static_cast<size_t>(page_size)) {
      response->set_next_page_token(EncodePageToken(rows[page_size - 1].first));
    }
    response->set_revision(revision);
    return absl::OkStatus();
  });
}

}  // namespace wm::rpc
