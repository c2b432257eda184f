#include "server/resolution/tree.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/resolution/field_error.h"

namespace wm::resolution {
namespace {

using definitions::ExprIndex;
using definitions::FragmentedPodSpec;
using definitions::kNone;
using expressions::Session;

absl::Status Negative(const Json& value) {
  return absl::InvalidArgumentError(
      absl::StrCat("replica count ", value.dump(), " is negative (at least 0)"));
}

// Evaluates each present expression and pads the outputs to the longest
// list; fails when that length differs from the count of instance ids, and
// names the definition fields that disagree. Returns one row per
// expression; all rows have `ids` entries, or none when no expression is
// present ("no data"). The error names the `part` ("spec", "scale") of
// `component`.
// Held inline for the spec's and the scale's three expressions.
using Rows = absl::InlinedVector<expressions::Outputs, 3>;

absl::StatusOr<Rows> ZipByIndex(Evaluation& eval, Session::InputId root,
                                absl::Span<const ExprIndex> exprs, size_t ids, ExprIndex ids_expr,
                                absl::string_view component, absl::string_view part) {
  if (std::all_of(exprs.begin(), exprs.end(), [](ExprIndex e) { return e == kNone; })) {
    return Rows{};
  }
  Rows rows(exprs.size());
  size_t longest = 0;
  ExprIndex longest_expr = kNone;
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (exprs[i] == kNone) continue;
    auto values = eval.Views(exprs[i], root);
    if (!values.ok()) return values.status();
    rows[i] = *std::move(values);
    if (longest_expr == kNone || rows[i].size() > longest) longest_expr = exprs[i];
    longest = std::max(longest, rows[i].size());
  }
  if (longest != ids) {
    const auto& fields = eval.def().field_paths;
    std::string ids_field = ids_expr == kNone ? "(single instance)" : fields[ids_expr];
    return WithFieldPath(absl::InvalidArgumentError(absl::StrCat(
                             "component ", component, " ", part, ": instance ids count (", ids,
                             ") does not match results count (", longest, "): ", ids_field,
                             " yields ", ids, ", ", fields[longest_expr], " yields ", longest)),
                         fields[longest_expr]);
  }
  for (auto& row : rows) row.resize(ids);  // pads with null
  return rows;
}

// The component's own part: instances with their spec, fragments and scale;
// the children are left to BuildComponent.
absl::StatusOr<ComponentNode> BuildInstances(Evaluation& eval, Session::InputId root, int index) {
  const auto& compiled = eval.def().components[index];
  const auto& def = *compiled.def;
  ComponentNode node;
  node.index = index;
  if (compiled.instance_ids != kNone) {
    auto ids = eval.Views(compiled.instance_ids, root);
    if (!ids.ok()) return ids.status();
    node.raw_ids.reserve(ids->size());
    for (const expressions::Output& output : *ids) {
      const Json& id = *output;
      if (!id.is_string()) {
        return FieldError(absl::StatusCode::kInvalidArgument,
                          eval.def().field_paths[compiled.instance_ids],
                          absl::StrCat("instance id ", id.dump(), " is not a string"));
      }
      if (id.get_ptr<const std::string*>()->empty()) {
        return FieldError(absl::StatusCode::kInvalidArgument,
                          eval.def().field_paths[compiled.instance_ids], "instance id is empty");
      }
      node.raw_ids.push_back(id.get<std::string>());
    }
  } else {
    node.raw_ids.push_back("");
  }
  const size_t n = node.raw_ids.size();
  std::vector<InstanceNode> raw(n);
  for (size_t i = 0; i < n; ++i) raw[i].id = node.raw_ids[i];

  // Pod template / pod spec (+ metadata).
  auto specs =
      ZipByIndex(eval, root, {compiled.pod_template_spec, compiled.pod_spec, compiled.metadata}, n,
                 compiled.instance_ids, def.name, "spec");
  if (!specs.ok()) return specs.status();
  if (!specs->empty()) {
    for (size_t i = 0; i < n; ++i) {
      raw[i].pod_template_spec = std::move((*specs)[0][i]);
      raw[i].pod_spec = std::move((*specs)[1][i]);
      raw[i].metadata = std::move((*specs)[2][i]);
    }
  }
  // Fragmented pod spec.
  absl::Span<const ExprIndex> frag(compiled.fragmented);
  auto fragments =
      ZipByIndex(eval, root, frag, n, compiled.instance_ids, def.name, "fragmented spec");
  if (!fragments.ok()) return fragments.status();
  if (!fragments->empty()) {
    for (size_t i = 0; i < n; ++i) {
      raw[i].fragmented = Json::object();
      for (int f = 0; f < FragmentedPodSpec::kFieldCount; ++f) {
        if (frag[f] == kNone) continue;
        raw[i].fragmented[FragmentedPodSpec::ValueKey(FragmentedPodSpec::Field(f))] =
            std::move((*fragments)[f][i]).Take();
      }
    }
  }
  // Scale.
  auto scales =
      ZipByIndex(eval, root, {compiled.replicas, compiled.min_replicas, compiled.max_replicas}, n,
                 compiled.instance_ids, def.name, "scale");
  if (!scales.ok()) return scales.status();
  if (!scales->empty()) {
    for (size_t i = 0; i < n; ++i) {
      std::optional<int32_t>* targets[] = {&raw[i].replicas, &raw[i].min_replicas,
                                           &raw[i].max_replicas};
      for (int s = 0; s < 3; ++s) {
        auto value = ScaleValue(*(*scales)[s][i]);
        if (!value.ok()) {
          ExprIndex e = s == 0   ? compiled.replicas
                        : s == 1 ? compiled.min_replicas
                                 : compiled.max_replicas;
          return FieldError(
              absl::StatusCode::kInvalidArgument, eval.def().field_paths[e],
              absl::StrCat(raw[i].id.empty() ? "" : absl::StrCat("instance ", raw[i].id, ": "),
                           value.status().message()));
        }
        *targets[s] = *value;
      }
    }
  }
  // Unique ids, sorted; a later duplicate overwrites an earlier one: sorted
  // by id, then document order, the last of equal ids is kept.
  absl::InlinedVector<size_t, 8> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return raw[a].id != raw[b].id ? raw[a].id < raw[b].id : a < b;
  });
  node.instances.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    if (k + 1 < n && raw[order[k + 1]].id == raw[order[k]].id) continue;
    node.instances.push_back(std::move(raw[order[k]]));
  }
  return node;
}

ComponentNode BuildComponent(Evaluation& eval, Session::InputId root, int index) {
  auto node = BuildInstances(eval, root, index);
  if (!node.ok()) {
    ComponentNode failed;
    failed.index = index;
    failed.error = node.status();
    return failed;
  }
  for (int child : eval.def().components[index].children) {
    node->children.push_back(BuildComponent(eval, root, child));
  }
  return *std::move(node);
}

}  // namespace

int32_t InstanceNode::Desired() const {
  if (replicas) return *replicas;
  if (min_replicas) return *min_replicas;
  return 1;
}

int32_t InstanceNode::EffectiveMin() const {
  if (min_replicas && *min_replicas > 0) return *min_replicas;
  if (replicas && *replicas > 0) return *replicas;
  return 0;
}

const Json& InstanceNode::PodSpec() const {
  static const Json kNull;
  if (pod_template_spec->is_object()) {
    auto it = pod_template_spec->find("spec");
    return it == pod_template_spec->end() ? kNull : *it;
  }
  return pod_spec->is_object() ? *pod_spec : kNull;
}

absl::StatusOr<std::optional<int32_t>> ScaleValue(const Json& value) {
  if (value.is_null()) return std::nullopt;
  constexpr double kMin = std::numeric_limits<int32_t>::min();
  constexpr double kMax = std::numeric_limits<int32_t>::max();
  if (value.is_number()) {
    double d = value.get<double>();
    if (std::floor(d) != d || d < kMin || d > kMax) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot convert ", value.dump(), " to an int32 replica count"));
    }
    if (d < 0) return Negative(value);
    return static_cast<int32_t>(d);
  }
  if (value.is_string()) {
    // Base-10 only, as Go's strconv.ParseInt: no spaces, no fraction.
    const std::string& s = *value.get_ptr<const std::string*>();
    size_t digits = s.find_first_not_of("+-") == 1 ? 1 : 0;
    bool plain =
        s.size() > digits && s.find_first_not_of("0123456789", digits) == std::string::npos;
    int32_t v;
    if (!plain || !absl::SimpleAtoi(s, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot parse ", value.dump(), " as an int32 replica count"));
    }
    if (v < 0) return Negative(value);
    return v;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cannot convert ", value.dump(), " to an int32 replica count"));
}

ComponentNode BuildTree(Evaluation& eval, Session::InputId root) {
  return BuildComponent(eval, root, 0);
}

const InstanceNode* FindInstance(const ComponentNode& node, absl::string_view id) {
  auto it = std::lower_bound(
      node.instances.begin(), node.instances.end(), id,
      [](const InstanceNode& instance, absl::string_view key) { return instance.id < key; });
  return it != node.instances.end() && it->id == id ? &*it : nullptr;
}

const ComponentNode* FindNode(const ComponentNode& root, int index) {
  if (root.index == index) return &root;
  for (const auto& child : root.children) {
    if (const ComponentNode* found = FindNode(child, index)) return found;
  }
  return nullptr;
}

const ComponentNode* FirstFailed(const ComponentNode& root) {
  if (!root.error.ok()) return &root;
  for (const auto& child : root.children) {
    if (const ComponentNode* failed = FirstFailed(child)) return failed;
  }
  return nullptr;
}

}  // namespace wm::resolution
