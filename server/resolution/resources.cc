#include "server/resolution/resources.h"

#include <algorithm>
#include <limits>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/common/quantity.h"

namespace wm::resolution {
namespace {

absl::Status Overflow(absl::string_view name, int64_t a, absl::string_view op, int64_t b) {
  return absl::InvalidArgumentError(absl::StrCat(
      name, ": ", FormatReported(name, ReportedValue(name, Quantity{a})), " ", op, " ",
      op == "+" ? FormatReported(name, ReportedValue(name, Quantity{b})) : absl::StrCat(b),
      " overflows the largest quantity (", std::numeric_limits<int64_t>::max(), "m)"));
}

// The amounts of one requirements block (a container's, the pod's, the
// overhead) in the order the block names them, names viewed in the tree.
using Amounts = absl::InlinedVector<std::pair<absl::string_view, int64_t>, 4>;

void Set(Amounts& amounts, absl::string_view name, int64_t milli) {
  for (auto& [n, m] : amounts) {
    if (n == name) {
      m = milli;
      return;
    }
  }
  amounts.emplace_back(name, milli);
}

const int64_t* Get(const Amounts& amounts, absl::string_view name) {
  for (const auto& [n, m] : amounts) {
    if (n == name) return &m;
  }
  return nullptr;
}

absl::Status AddMap(Resources& into, const Amounts& r) {
  for (const auto& [name, milli] : r) {
    int64_t& total = into[name];
    int64_t sum;
    if (__builtin_add_overflow(total, milli, &sum)) return Overflow(name, total, "+", milli);
    total = sum;
  }
  return absl::OkStatus();
}

void MaxMap(Resources& into, const Amounts& r) {
  for (const auto& [name, milli] : r) {
    int64_t& total = into[name];
    total = std::max(total, milli);
  }
}

void MaxMap(Amounts& into, const Amounts& r) {
  for (const auto& [name, milli] : r) {
    const int64_t* seen = Get(into, name);
    Set(into, name, seen == nullptr ? milli : std::max(*seen, milli));
  }
}

// Reads the quantities of `block` (an object of resource names) into
// `into`, replacing earlier amounts of the same names. Kubernetes refuses
// a quantity that is not one, or is negative; so do we, naming it: `path`
// names `block` in an error; it is only called for one.
// REQUIRES: block.is_object().
absl::Status ReadBlock(const Json& block, absl::FunctionRef<std::string()> path, Amounts& into) {
  for (const auto& member : *block.get_ptr<const Json::object_t*>()) {
    // Not a structured binding: `field` captures the name (clang 14, which
    // builds the fuzzers, refuses to capture bindings).
    const std::string& name = member.first;
    const Json& value = member.second;
    auto field = [&] { return absl::StrCat(path(), ".", name); };
    if (!value.is_string() && !value.is_number()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field(), ": ", value.dump(), " is not a quantity"));
    }
    std::string number;  // a number's text; a string is read in place
    auto q = ParseQuantity(value.is_string() ? *value.get_ptr<const std::string*>()
                                             : (number = value.dump()));
    if (!q.ok())
      return absl::InvalidArgumentError(absl::StrCat(field(), ": ", q.status().message()));
    if (q->milli < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field(), ": quantity ", value.dump(), " is negative (at least 0)"));
    }
    Set(into, name, q->milli);
  }
  return absl::OkStatus();
}

// Per resource: request, else limit. `path` names `requirements`.
absl::StatusOr<Amounts> RequirementsRequests(const Json& requirements,
                                             absl::FunctionRef<std::string()> path) {
  Amounts out;
  if (!requirements.is_object()) return out;
  for (const char* kind : {"limits", "requests"}) {  // requests overwrite limits
    const Json* block = FindMember(requirements, kind);
    if (block == nullptr || !block->is_object()) continue;
    if (absl::Status s = ReadBlock(
            *block, [&] { return absl::StrCat(path(), ".", kind); }, out);
        !s.ok()) {
      return s;
    }
  }
  return out;
}

// The requests of `container`, which `path` names in an error.
absl::StatusOr<Amounts> ContainerRequests(const Json& container,
                                          absl::FunctionRef<std::string()> path) {
  if (!container.is_object()) return Amounts{};
  const Json* resources = FindMember(container, "resources");
  if (resources == nullptr) return Amounts{};
  return RequirementsRequests(*resources, [&] { return absl::StrCat(path(), ".resources"); });
}

// Adds each container's requests of `list` (a Json array, named `name`) to
// `total`.
absl::Status AddContainers(Resources& total, const Json& list, absl::string_view name) {
  for (size_t i = 0; i < list.size(); ++i) {
    auto r = ContainerRequests(list[i], [&] { return absl::StrCat(name, "[", i, "]"); });
    if (!r.ok()) return r.status();
    if (absl::Status s = AddMap(total, *r); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool IsZero(const Resources& r) {
  return std::all_of(r.begin(), r.end(), [](const auto& e) { return e.second == 0; });
}

bool NameBefore(const Resources::value_type& entry, absl::string_view name) {
  return entry.first < name;
}

}  // namespace

int64_t& Resources::operator[](absl::string_view name) {
  // Sums mostly add names in order (they come from sorted objects and
  // other sums): the last entry first.
  if (entries_.empty() || entries_.back().first < name)
    return entries_.emplace_back(name, 0).second;
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name, NameBefore);
  if (it == entries_.end() || it->first != name) it = entries_.insert(it, {name, 0});
  return it->second;
}

const int64_t* Resources::Find(absl::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name, NameBefore);
  return it == entries_.end() || it->first != name ? nullptr : &it->second;
}

absl::StatusOr<Resources> PodSpecRequests(const Json& pod_spec) {
  Resources total;
  if (!pod_spec.is_object()) return total;
  if (const Json* containers = FindMember(pod_spec, "containers");
      containers != nullptr && containers->is_array()) {
    if (absl::Status s = AddContainers(total, *containers, "containers"); !s.ok()) return s;
  }
  if (const Json* init_containers = FindMember(pod_spec, "initContainers");
      init_containers != nullptr && init_containers->is_array()) {
    Amounts init_max;
    for (size_t i = 0; i < init_containers->size(); ++i) {
      const Json& c = (*init_containers)[i];
      auto r = ContainerRequests(c, [&] { return absl::StrCat("initContainers[", i, "]"); });
      if (!r.ok()) return r.status();
      bool sidecar = c.is_object() && c.value("restartPolicy", "") == "Always";
      if (sidecar) {
        if (absl::Status s = AddMap(total, *r); !s.ok()) return s;
      } else {
        MaxMap(init_max, *r);
      }
    }
    MaxMap(total, init_max);
  }
  if (const Json* resources = FindMember(pod_spec, "resources");
      resources != nullptr && resources->is_object()) {
    auto pod_level = RequirementsRequests(*resources, [] { return std::string("resources"); });
    if (!pod_level.ok()) return pod_level.status();
    for (const char* name : {"cpu", "memory"}) {
      if (const int64_t* milli = Get(*pod_level, name)) total[name] = *milli;
    }
  }
  if (const Json* block = FindMember(pod_spec, "overhead");
      block != nullptr && block->is_object()) {
    Amounts overhead;
    if (absl::Status s = ReadBlock(
            *block, [] { return std::string("overhead"); }, overhead);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = AddMap(total, overhead); !s.ok()) return s;
  }
  return total;
}

absl::StatusOr<Resources> FragmentedRequests(const Json& fragmented) {
  Resources total;
  if (!fragmented.is_object()) return total;
  if (const Json* containers = FindMember(fragmented, "containers");
      containers != nullptr && containers->is_array()) {
    if (absl::Status s = AddContainers(total, *containers, "containers"); !s.ok()) return s;
  }
  if (const Json* container = FindMember(fragmented, "container"); container != nullptr) {
    auto r = ContainerRequests(*container, [] { return std::string("container"); });
    if (!r.ok()) return r.status();
    if (absl::Status s = AddMap(total, *r); !s.ok()) return s;
  }
  if (IsZero(total)) {
    if (const Json* requirements = FindMember(fragmented, "resources"); requirements != nullptr) {
      auto r = RequirementsRequests(*requirements, [] { return std::string("resources"); });
      if (!r.ok()) return r.status();
      Resources resources;
      for (const auto& [name, milli] : *r) resources[name] = milli;
      return resources;
    }
  }
  return total;
}

absl::Status AddScaled(Resources& into, const Resources& r, int64_t factor) {
  for (const auto& [name, milli] : r) {
    int64_t scaled;
    if (__builtin_mul_overflow(milli, factor, &scaled)) return Overflow(name, milli, "×", factor);
    int64_t& total = into[name];
    int64_t sum;
    if (__builtin_add_overflow(total, scaled, &sum)) return Overflow(name, total, "+", scaled);
    total = sum;
  }
  return absl::OkStatus();
}

void ExportResources(const Resources& r, workloadmap::v1::ResourceList* out) {
  for (const auto& [name, milli] : r) {
    int64_t value = ReportedValue(name, Quantity{milli});
    if (value != 0) (*out->mutable_quantities())[std::string(name)] = value;
  }
}

}  // namespace wm::resolution
