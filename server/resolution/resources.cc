#include "server/resolution/resources.h"

#include <algorithm>

#include "server/common/quantity.h"

namespace wm::resolution {
namespace {

void AddMap(Resources& into, const Resources& r) {
  for (const auto& [name, milli] : r) into[name] += milli;
}

void MaxMap(Resources& into, const Resources& r) {
  for (const auto& [name, milli] : r) into[name] = std::max(into[name], milli);
}

// Per resource: request, else limit.
Resources RequirementsRequests(const Json& requirements) {
  Resources out;
  if (!requirements.is_object()) return out;
  for (const char* kind : {"limits", "requests"}) {  // requests overwrite limits
    auto it = requirements.find(kind);
    if (it == requirements.end() || !it->is_object()) continue;
    for (const auto& [name, value] : it->items()) {
      absl::StatusOr<Quantity> q = value.is_string()   ? ParseQuantity(value.get<std::string>())
                                   : value.is_number() ? ParseQuantity(value.dump())
                                                       : absl::InvalidArgumentError("");
      if (q.ok()) out[name] = q->milli;
    }
  }
  return out;
}

Resources ContainerRequests(const Json& container) {
  if (!container.is_object()) return {};
  auto it = container.find("resources");
  return it == container.end() ? Resources{} : RequirementsRequests(*it);
}

bool IsZero(const Resources& r) {
  return std::all_of(r.begin(), r.end(), [](const auto& e) { return e.second == 0; });
}

}  // namespace

Resources PodSpecRequests(const Json& pod_spec) {
  Resources total;
  if (!pod_spec.is_object()) return total;
  if (auto it = pod_spec.find("containers"); it != pod_spec.end() && it->is_array()) {
    for (const Json& c : *it) AddMap(total, ContainerRequests(c));
  }
  Resources init_max;
  if (auto it = pod_spec.find("initContainers"); it != pod_spec.end() && it->is_array()) {
    for (const Json& c : *it) {
      bool sidecar = c.is_object() && c.value("restartPolicy", "") == "Always";
      if (sidecar) {
        AddMap(total, ContainerRequests(c));
      } else {
        MaxMap(init_max, ContainerRequests(c));
      }
    }
  }
  MaxMap(total, init_max);
  if (auto it = pod_spec.find("resources"); it != pod_spec.end() && it->is_object()) {
    Resources pod_level = RequirementsRequests(*it);
    for (const char* name : {"cpu", "memory"}) {
      if (pod_level.contains(name)) total[name] = pod_level[name];
    }
  }
  if (auto it = pod_spec.find("overhead"); it != pod_spec.end() && it->is_object()) {
    AddMap(total, RequirementsRequests(Json{{"requests", *it}}));
  }
  return total;
}

Resources FragmentedRequests(const Json& fragmented) {
  Resources total;
  if (!fragmented.is_object()) return total;
  if (auto it = fragmented.find("containers"); it != fragmented.end() && it->is_array()) {
    for (const Json& c : *it) AddMap(total, ContainerRequests(c));
  }
  if (auto it = fragmented.find("container"); it != fragmented.end()) {
    AddMap(total, ContainerRequests(*it));
  }
  if (IsZero(total)) {
    if (auto it = fragmented.find("resources"); it != fragmented.end()) {
      total = RequirementsRequests(*it);
    }
  }
  return total;
}

void AddScaled(Resources& into, const Resources& r, int64_t factor) {
  for (const auto& [name, milli] : r) into[name] += milli * factor;
}

void ExportResources(const Resources& r, workloadmap::v1::ResourceList* out) {
  for (const auto& [name, milli] : r) {
    int64_t value = ReportedValue(name, Quantity{milli});
    if (value != 0) (*out->mutable_quantities())[name] = value;
  }
}

}  // namespace wm::resolution
