#include "server/platform/workload_metrics.h"

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "server/definitions/definition.h"

namespace wm::platform {
namespace {

namespace v1 = ::workloadmap::v1;
using observability::ExpositionWriter;

constexpr int kStatusCount = static_cast<int>(definitions::WorkloadStatus::kUndefined) + 1;
using StatusSet = std::array<bool, kStatusCount>;

const char* StatusAt(int i) {
  return definitions::StatusName(static_cast<definitions::WorkloadStatus>(i));
}

// A resource's name as kube-state-metrics puts it in a label
// ("nvidia.com/gpu" -> "nvidia_com_gpu"), its unit, and the quantity in
// that unit (ResourceList keeps cpu in millicores).
struct ResourceSample {
  std::string resource;
  const char* unit;
  double value;
};
ResourceSample ToSample(const std::string& name, int64_t quantity) {
  ResourceSample sample{name, "integer", static_cast<double>(quantity)};
  for (char& c : sample.resource) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  if (name == "cpu") {
    sample.unit = "core";
    sample.value = static_cast<double>(quantity) / 1000;
  } else if (name == "memory" || name == "ephemeral-storage" || name == "storage" ||
             absl::StartsWith(name, "hugepages-")) {
    sample.unit = "byte";
  }
  return sample;
}

// One component's numbers, summed over its occurrences (one under each
// instance of its parent).
struct ComponentTotals {
  std::string name;
  int64_t desired = 0, current = 0, ready = 0;
  std::map<std::string, int64_t> requests;          // own pods at desired scale
  std::map<std::string, int64_t> current_requests;  // own Running pods
};

struct PodRow {
  const v1::Pod* pod;
  const std::string* component;
  const std::string* instance;
};

// What the families need of one resolved workload, gathered once a scrape.
struct Digest {
  std::vector<ComponentTotals> components;  // in tree order, by name
  std::vector<PodRow> pods;
};

void Gather(const v1::Component& component, Digest& digest) {
  // An index, not a pointer: gathering the children grows the vector.
  size_t at = 0;
  while (at < digest.components.size() && digest.components[at].name != component.name()) ++at;
  if (at == digest.components.size()) digest.components.emplace_back().name = component.name();
  {
    ComponentTotals& totals = digest.components[at];
    totals.desired += component.replicas().desired();
    totals.current += component.replicas().current();
    totals.ready += component.replicas().ready();
  }
  for (const v1::ComponentInstance& instance : component.instances()) {
    ComponentTotals& totals = digest.components[at];
    for (const auto& [resource, quantity] : instance.pod_resources().quantities()) {
      totals.requests[resource] += quantity * instance.replicas().desired();
    }
    for (const v1::Pod& pod : instance.pods()) {
      digest.pods.push_back({&pod, &component.name(), &instance.id()});
      if (pod.phase() != "Running") continue;
      for (const auto& [resource, quantity] : pod.resources().quantities()) {
        totals.current_requests[resource] += quantity;
      }
    }
    for (const v1::Component& child : instance.children()) Gather(child, digest);
  }
}

// The statuses each definition's root can map, by cluster and definition
// name; Undefined is always possible.
std::map<std::pair<std::string, std::string>, StatusSet> MappedStatuses(
    const index::WorkloadIndex& index) {
  std::map<std::pair<std::string, std::string>, StatusSet> out;
  for (const index::Cluster* cluster : index.clusters()) {
    std::shared_ptr<const definitions::Registry> registry = cluster->definitions();
    if (registry == nullptr) continue;
    for (const auto& definition : registry->All()) {
      StatusSet& mapped = out[{cluster->name(), definition->name}];
      mapped.fill(false);
      mapped[kStatusCount - 1] = true;
      if (!definition->root.status) continue;
      for (int i = 0; i < definitions::kMappedStatusCount; ++i) {
        mapped[i] = !definition->root.status->mappings[i].empty();
      }
    }
  }
  return out;
}

// Hands out the scrape's series up to the limit and counts the rest.
class SeriesBudget {
 public:
  explicit SeriesBudget(size_t limit) : left_(limit) {}
  bool Take() {
    if (left_ == 0) {
      ++dropped_;
      return false;
    }
    --left_;
    return true;
  }
  uint64_t dropped() const { return dropped_; }

 private:
  size_t left_;
  uint64_t dropped_ = 0;
};

}  // namespace

WorkloadMetrics::WorkloadMetrics(const index::WorkloadIndex& index, Options options)
    : index_(index), options_(std::move(options)) {}

void WorkloadMetrics::Write(ExpositionWriter& writer) const {
  const absl::Time now = options_.clock ? options_.clock() : absl::Now();
  const std::vector<std::shared_ptr<const index::WorkloadView>> views = index_.List();
  const auto mapped = MappedStatuses(index_);
  std::vector<Digest> digests(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    if (views[i]->resolved) Gather(views[i]->resolved->root(), digests[i]);
  }
  SeriesBudget budget(options_.max_series);
  // The labels every series of a workload carries, escaped once.
  std::vector<ExpositionWriter::EscapedLabels> identities;
  identities.reserve(views.size());
  for (const auto& view : views) {
    identities.emplace_back(
        std::initializer_list<ExpositionWriter::Label>{{"cluster", view->id.cluster},
                                                       {"namespace", view->namespace_},
                                                       {"kind", view->id.gvk.kind},
                                                       {"group", view->id.gvk.group},
                                                       {"name", view->name}});
  }
  auto sample = [&](absl::string_view family, size_t i,
                    std::initializer_list<ExpositionWriter::Label> labels, double value) {
    if (!budget.Take()) return;
    writer.Sample(family, identities[i], labels, value);
  };

  writer.StartFamily("workloadmap_workload_info",
                     "Workloads the daemon resolves: 1 per workload, with its uid and the "
                     "definition that resolves it.",
                     "gauge");
  for (size_t i = 0; i < views.size(); ++i) {
    const index::WorkloadView& view = *views[i];
    const std::string& definition =
        view.resolved ? view.resolved->definition().name() : view.summary.definition();
    sample("workloadmap_workload_info", i, {{"uid", view.uid}, {"definition", definition}}, 1);
  }

  writer.StartFamily("workloadmap_workload_resolution_error",
                     "1 for a workload its definition could not resolve (see ListWorkloads' "
                     "error); it has no other series than its info.",
                     "gauge");
  for (size_t i = 0; i < views.size(); ++i) {
    if (!views[i]->resolved) sample("workloadmap_workload_resolution_error", i, {}, 1);
  }

  writer.StartFamily("workloadmap_workload_phase",
                     "The workload's phase (its first matched status in the format's order, "
                     "else Undefined) as 1, and 0 for every other status its definition maps.",
                     "gauge");
  for (size_t v = 0; v < views.size(); ++v) {
    const auto& view = views[v];
    if (!view->resolved) continue;
    const v1::WorkloadStatus& status = view->resolved->status();
    const std::string phase =
        status.matched_statuses().empty() ? "Undefined" : status.matched_statuses(0);
    auto it = mapped.find({view->id.cluster, view->resolved->definition().name()});
    bool known = false;
    for (int i = 0; i < kStatusCount; ++i) {
      bool current = phase == StatusAt(i);
      known |= current;
      if (current || (it != mapped.end() && it->second[i])) {
        sample("workloadmap_workload_phase", v, {{"phase", StatusAt(i)}}, current ? 1 : 0);
      }
    }
    if (!known) sample("workloadmap_workload_phase", v, {{"phase", phase}}, 1);
  }

  writer.StartFamily("workloadmap_workload_status",
                     "1 for each status the workload's definition matches now (statuses are "
                     "not exclusive: Running and Degraded).",
                     "gauge");
  for (size_t i = 0; i < views.size(); ++i) {
    if (!views[i]->resolved) continue;
    for (const std::string& status : views[i]->resolved->status().matched_statuses()) {
      sample("workloadmap_workload_status", i, {{"status", status}}, 1);
    }
  }

  writer.StartFamily("workloadmap_component_replicas",
                     "Replicas of each component of a workload, summed over its instances: "
                     "desired (the spec), current (pods) and ready.",
                     "gauge");
  for (size_t i = 0; i < views.size(); ++i) {
    for (const ComponentTotals& c : digests[i].components) {
      sample("workloadmap_component_replicas", i, {{"component", c.name}, {"state", "desired"}},
             c.desired);
      sample("workloadmap_component_replicas", i, {{"component", c.name}, {"state", "current"}},
             c.current);
      sample("workloadmap_component_replicas", i, {{"component", c.name}, {"state", "ready"}},
             c.ready);
    }
  }

  auto write_requests = [&](const char* family, const char* help, bool current) {
    writer.StartFamily(family, help, "gauge");
    for (size_t i = 0; i < views.size(); ++i) {
      for (const ComponentTotals& c : digests[i].components) {
        for (const auto& [resource, quantity] : current ? c.current_requests : c.requests) {
          ResourceSample s = ToSample(resource, quantity);
          sample(family, i, {{"component", c.name}, {"resource", s.resource}, {"unit", s.unit}},
                 s.value);
        }
      }
    }
  };
  write_requests("workloadmap_workload_resource_requests",
                 "What the pods of a workload's component request at its desired scale, as the "
                 "scheduler counts a pod's request (a child component counts its own pods).",
                 false);
  write_requests("workloadmap_workload_resource_requests_current",
                 "What the Running pods of a workload's component request now.", true);

  writer.StartFamily("workloadmap_workload_last_change_timestamp_seconds",
                     "When the workload's resolved state (status, components, pods) last "
                     "changed, in Unix seconds.",
                     "gauge");
  for (size_t i = 0; i < views.size(); ++i) {
    if (views[i]->changed == absl::InfinitePast()) continue;
    sample("workloadmap_workload_last_change_timestamp_seconds", i, {},
           absl::ToDoubleSeconds(views[i]->changed - absl::UnixEpoch()));
  }
  writer.StartFamily("workloadmap_workload_view_age_seconds",
                     "Seconds since the workload's resolved state last changed, at the scrape.",
                     "gauge");
  for (size_t i = 0; i < views.size(); ++i) {
    if (views[i]->changed == absl::InfinitePast()) continue;
    sample("workloadmap_workload_view_age_seconds", i, {},
           absl::ToDoubleSeconds(now - views[i]->changed));
  }

  writer.StartFamily("workloadmap_pod_workload_info",
                     "1 per pod of a workload, naming its workload, component and instance: "
                     "join pod-level series to workloads on namespace and pod.",
                     "gauge");
  for (size_t i = 0; i < views.size(); ++i) {
    const index::WorkloadView& view = *views[i];
    for (const PodRow& row : digests[i].pods) {
      if (!budget.Take()) continue;
      writer.Sample(
          "workloadmap_pod_workload_info",
          {{"cluster", view.id.cluster},
           {"namespace", row.pod->namespace_().empty() ? view.namespace_ : row.pod->namespace_()},
           {"pod", row.pod->name()},
           {"uid", row.pod->uid()},
           {"workload_kind", view.id.gvk.kind},
           {"workload_name", view.name},
           {"component", *row.component},
           {"instance", *row.instance}},
          1);
    }
  }

  uint64_t dropped =
      dropped_.fetch_add(budget.dropped(), std::memory_order_relaxed) + budget.dropped();
  writer.StartFamily("workloadmap_workload_series_dropped_total",
                     "Workload series left out of scrapes over --workload-metrics-max-series.",
                     "counter");
  writer.Sample("workloadmap_workload_series_dropped_total", {}, static_cast<double>(dropped));
}

}  // namespace wm::platform
