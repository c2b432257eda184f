// ListWorkloads: the index's views, filtered, newest first, in pages.
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/rpc/internal/list_access.h"
#include "server/rpc/internal/list_filter.h"
#include "server/rpc/page_token.h"
#include "server/rpc/service.h"

namespace wm::rpc {

namespace v1 = workloadmap::v1;
using internal::ListAccess;
using internal::ListFilter;
using internal::MakeFilter;
using internal::NotReadyError;
using ::wm::index::WorkloadView;

namespace {

constexpr char kListWorkloads[] = "ListWorkloads";

// Newest first; ties by cluster, namespace, kind and name.
std::string SortKey(const WorkloadView& v) {
  return absl::StrCat(v.creation_timestamp, "\x1f", v.id.cluster, "\x1f", v.namespace_, "\x1f",
                      v.id.gvk.group, "/", v.id.gvk.kind, "\x1f", v.name);
}

bool Newer(absl::string_view a, absl::string_view b) {
  // Timestamps are RFC 3339 in UTC with a fixed width, so they sort as text;
  // the rest of the key breaks ties in ascending order. (Views, not copies:
  // a listing compares some 10^5 pairs.)
  absl::string_view ta = a.substr(0, a.find('\x1f')), tb = b.substr(0, b.find('\x1f'));
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
  std::optional<ListFilter> filter;
  std::string after;
  auto prepare = [&]() -> absl::Status {
    if (!ready_) return NotReadyError();
    if (request->page_size() < 0) return absl::InvalidArgumentError("page_size is negative");
    auto made = MakeFilter(index_, kind_names_, request->cluster(), request->namespace_(),
                           request->kinds(), request->statuses(), request->label_selector());
    if (!made.ok()) return made.status();
    filter = *std::move(made);
    if (!request->page_token().empty()) {
      auto key = DecodePageToken(request->page_token());
      if (!key.ok()) return key.status();
      after = *std::move(key);
    }
    return absl::OkStatus();
  };
  if (absl::Status prepared = prepare(); !prepared.ok()) {
    return RunHere(call, kListWorkloads, [&] { return prepared; });
  }
  auto access = std::make_shared<ListAccess>(call.caller, options_.access_reviewers, index_);
  // Lists `views` into the response; false when a decision on who may see
  // them is not cached and `may_ask` is false.
  auto list = [this, request, response, access, filter = *std::move(filter),
               after = std::move(after)](bool may_ask) -> absl::StatusOr<bool> {
    int page_size = request->page_size() == 0 ? 100 : request->page_size();
    page_size = std::min(page_size, options_.max_page_size);
    uint64_t revision = index_.revision();
    std::vector<std::pair<std::string, std::shared_ptr<const WorkloadView>>> rows;
    for (auto& view : index_.List()) {
      if (!filter.Matches(index_, kind_names_, *view)) continue;
      absl::StatusOr<std::optional<bool>> may_see = access->MaySee(*view, may_ask);
      if (!may_see.ok()) return may_see.status();
      if (!may_see->has_value()) return false;
      if (!**may_see) continue;
      std::string key = SortKey(*view);
      if (!after.empty() && !Newer(after, key)) continue;
      rows.emplace_back(std::move(key), std::move(view));
    }
    // Only the page (and one more, to know whether another page follows)
    // needs its order: a listing in pages sorts N log(page), not N log N,
    // per page.
    size_t ordered = std::min(rows.size(), static_cast<size_t>(page_size) + 1);
    std::partial_sort(rows.begin(), rows.begin() + ordered, rows.end(),
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
    response->set_filtered(access->filtered());
    return true;
  };
  absl::StatusOr<bool> listed = list(/*may_ask=*/false);
  if (!listed.ok() || *listed) {
    return RunHere(call, kListWorkloads, [&] { return listed.status(); });
  }
  // Some decision needs a SubjectAccessReview: the whole listing, on the pool.
  return Offload(call, kListWorkloads, [list]() -> absl::Status { return list(true).status(); });
}

}  // namespace wm::rpc
