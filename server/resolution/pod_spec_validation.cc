#include "server/resolution/pod_spec_validation.h"

#include <cmath>
#include <initializer_list>
#include <map>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/kube_names.h"
#include "server/common/quantity.h"
#include "server/common/user_text.h"

namespace wm::resolution {
namespace {

using Names = std::initializer_list<const char*>;

absl::Status Invalid(const std::string& field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

std::string Child(const std::string& field, absl::string_view name) {
  return absl::StrCat(field, ".", name);
}
std::string Index(const std::string& field, size_t i) { return absl::StrCat(field, "[", i, "]"); }
std::string Key(const std::string& field, absl::string_view key) {
  return absl::StrCat(field, "[", QuoteUserText(key), "]");
}

std::string Article(const Json& v) {
  return v.is_array() || v.is_object() ? absl::StrCat("an ", v.type_name())
                                       : absl::StrCat("a ", v.type_name());
}

absl::Status ExpectType(const Json& v, Json::value_t type, const char* wanted,
                        const std::string& field) {
  bool ok = v.type() == type || (type == Json::value_t::number_integer && v.is_number_unsigned());
  if (ok) return absl::OkStatus();
  return Invalid(field, absl::StrCat("must be ", wanted, ", not ", Article(v)));
}
absl::Status ExpectObject(const Json& v, const std::string& field) {
  return ExpectType(v, Json::value_t::object, "an object", field);
}
absl::Status ExpectArray(const Json& v, const std::string& field) {
  return ExpectType(v, Json::value_t::array, "a list", field);
}
absl::Status ExpectString(const Json& v, const std::string& field) {
  return ExpectType(v, Json::value_t::string, "a string", field);
}

// An object with only the named fields.
absl::Status ExpectFields(const Json& v, Names fields, const std::string& field) {
  if (absl::Status s = ExpectObject(v, field); !s.ok()) return s;
  for (const auto& [key, value] : v.items()) {
    bool known = false;
    for (const char* f : fields) known = known || key == f;
    if (!known) {
      return Invalid(field, absl::StrCat("unknown field ", QuoteUserText(key),
                                         " (fields: ", absl::StrJoin(fields, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

// The string at `key`, "" when absent or null.
absl::StatusOr<std::string> StringAt(const Json& object, const char* key,
                                     const std::string& field) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (absl::Status s = ExpectString(*it, Child(field, key)); !s.ok()) return s;
  return it->get<std::string>();
}

// The list at `key`, empty when absent or null.
absl::StatusOr<Json> ArrayAt(const Json& object, const char* key, const std::string& field) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Json::array();
  if (absl::Status s = ExpectArray(*it, Child(field, key)); !s.ok()) return s;
  return *it;
}

absl::Status OneOf(const std::string& value, Names allowed, const std::string& field) {
  for (const char* a : allowed) {
    if (value == a) return absl::OkStatus();
  }
  return Invalid(
      field, absl::StrCat(QuoteUserText(value), " is not one of ", absl::StrJoin(allowed, ", ")));
}

absl::Status Problem(const std::string& problem, absl::string_view value,
                     const std::string& field) {
  if (problem.empty()) return absl::OkStatus();
  return Invalid(field, absl::StrCat(QuoteUserText(value), ": ", problem));
}

absl::Status QualifiedName(absl::string_view value, const std::string& field) {
  return Problem(QualifiedNameProblem(value), value, field);
}

absl::Status Weight(const Json& term, const std::string& field) {
  auto it = term.find("weight");
  if (it == term.end() || !it->is_number_integer() || *it < 1 || *it > 100) {
    return Invalid(Child(field, "weight"), "must be an integer in the range 1-100");
  }
  return absl::OkStatus();
}

// Values of a selector requirement by operator: In and NotIn need some,
// Exists and DoesNotExist none, Gt and Lt (node selectors only) one.
absl::Status RequirementValues(const std::string& op, const Json& values, bool label_values,
                               const std::string& field) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (absl::Status s = ExpectString(values[i], Index(field, i)); !s.ok()) return s;
    if (!label_values) continue;
    const std::string& v = values[i].get_ref<const std::string&>();
    if (absl::Status s = Problem(LabelValueProblem(v), v, Index(field, i)); !s.ok()) return s;
  }
  if ((op == "In" || op == "NotIn") && values.empty()) {
    return Invalid(field, "must be specified when operator is In or NotIn");
  }
  if ((op == "Exists" || op == "DoesNotExist") && !values.empty()) {
    return Invalid(field, "may not be specified when operator is Exists or DoesNotExist");
  }
  if ((op == "Gt" || op == "Lt") && values.size() != 1) {
    return Invalid(field, "must be a single value when operator is Gt or Lt");
  }
  return absl::OkStatus();
}

// A matchExpressions entry of a node selector term (with Gt and Lt) or of
// a label selector (without).
absl::Status SelectorRequirement(const Json& r, bool node, const std::string& field) {
  if (absl::Status s = ExpectFields(r, {"key", "operator", "values"}, field); !s.ok()) return s;
  auto key = StringAt(r, "key", field);
  if (!key.ok()) return key.status();
  auto op = StringAt(r, "operator", field);
  if (!op.ok()) return op.status();
  auto values = ArrayAt(r, "values", field);
  if (!values.ok()) return values.status();
  if (absl::Status s = QualifiedName(*key, Child(field, "key")); !s.ok()) return s;
  static const Names kNodeOperators = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  static const Names kLabelOperators = {"In", "NotIn", "Exists", "DoesNotExist"};
  absl::Status known =
      OneOf(*op, node ? kNodeOperators : kLabelOperators, Child(field, "operator"));
  if (!known.ok()) return known;
  return RequirementValues(*op, *values, /*label_values=*/*op != "Gt" && *op != "Lt",
                           Child(field, "values"));
}

absl::Status NodeSelectorTerm(const Json& term, const std::string& field) {
  if (absl::Status s = ExpectFields(term, {"matchExpressions", "matchFields"}, field); !s.ok()) {
    return s;
  }
  auto expressions = ArrayAt(term, "matchExpressions", field);
  if (!expressions.ok()) return expressions.status();
  for (size_t i = 0; i < expressions->size(); ++i) {
    absl::Status s =
        SelectorRequirement((*expressions)[i], true, Index(Child(field, "matchExpressions"), i));
    if (!s.ok()) return s;
  }
  auto fields = ArrayAt(term, "matchFields", field);
  if (!fields.ok()) return fields.status();
  for (size_t i = 0; i < fields->size(); ++i) {
    const std::string at = Index(Child(field, "matchFields"), i);
    const Json& r = (*fields)[i];
    if (absl::Status s = ExpectFields(r, {"key", "operator", "values"}, at); !s.ok()) return s;
    auto key = StringAt(r, "key", at);
    if (!key.ok()) return key.status();
    if (*key != "metadata.name") {
      return Invalid(Child(at, "key"), absl::StrCat(QuoteUserText(*key), " is not metadata.name"));
    }
    auto op = StringAt(r, "operator", at);
    if (!op.ok()) return op.status();
    if (absl::Status s = OneOf(*op, {"In", "NotIn"}, Child(at, "operator")); !s.ok()) return s;
    auto values = ArrayAt(r, "values", at);
    if (!values.ok()) return values.status();
    if (values->size() != 1) {
      return Invalid(Child(at, "values"), "must be one value for a node field selector");
    }
    if (absl::Status s = ExpectString((*values)[0], Index(Child(at, "values"), 0)); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// The weighted terms of `affinity[list]` (preferredDuringScheduling...):
// each a `weight` of 1-100 and its term under `key`, checked by `check`.
absl::Status PreferredTerms(const Json& affinity, const char* list, const char* key,
                            absl::Status (*check)(const Json&, const std::string&),
                            const std::string& field) {
  auto preferred = ArrayAt(affinity, list, field);
  if (!preferred.ok()) return preferred.status();
  for (size_t i = 0; i < preferred->size(); ++i) {
    const std::string at = Index(Child(field, list), i);
    const Json& term = (*preferred)[i];
    if (absl::Status s = ExpectFields(term, {"weight", key}, at); !s.ok()) return s;
    if (absl::Status s = Weight(term, at); !s.ok()) return s;
    if (!term.contains(key)) return Invalid(Child(at, key), "is required");
    if (absl::Status s = check(term[key], Child(at, key)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status NodeAffinity(const Json& affinity, const std::string& field) {
  const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  const char* kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
  if (absl::Status s = ExpectFields(affinity, {kRequired, kPreferred}, field); !s.ok()) return s;
  if (auto it = affinity.find(kRequired); it != affinity.end() && !it->is_null()) {
    const std::string at = Child(field, kRequired);
    if (absl::Status s = ExpectFields(*it, {"nodeSelectorTerms"}, at); !s.ok()) return s;
    auto terms = ArrayAt(*it, "nodeSelectorTerms", at);
    if (!terms.ok()) return terms.status();
    if (terms->empty()) {
      return Invalid(Child(at, "nodeSelectorTerms"), "must have at least one node selector term");
    }
    for (size_t i = 0; i < terms->size(); ++i) {
      absl::Status s = NodeSelectorTerm((*terms)[i], Index(Child(at, "nodeSelectorTerms"), i));
      if (!s.ok()) return s;
    }
  }
  return PreferredTerms(affinity, kPreferred, "preference", NodeSelectorTerm, field);
}

absl::Status LabelSelector(const Json& selector, const std::string& field) {
  if (selector.is_null()) return absl::OkStatus();
  if (absl::Status s = ExpectFields(selector, {"matchLabels", "matchExpressions"}, field);
      !s.ok()) {
    return s;
  }
  if (auto it = selector.find("matchLabels"); it != selector.end() && !it->is_null()) {
    if (absl::Status s = ValidateLabels(*it, Child(field, "matchLabels")); !s.ok()) return s;
  }
  auto expressions = ArrayAt(selector, "matchExpressions", field);
  if (!expressions.ok()) return expressions.status();
  for (size_t i = 0; i < expressions->size(); ++i) {
    absl::Status s =
        SelectorRequirement((*expressions)[i], false, Index(Child(field, "matchExpressions"), i));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status PodAffinityTerm(const Json& term, const std::string& field) {
  if (absl::Status s = ExpectFields(term,
                                    {"labelSelector", "namespaceSelector", "namespaces",
                                     "topologyKey", "matchLabelKeys", "mismatchLabelKeys"},
                                    field);
      !s.ok()) {
    return s;
  }
  for (const char* selector : {"labelSelector", "namespaceSelector"}) {
    if (auto it = term.find(selector); it != term.end()) {
      if (absl::Status s = LabelSelector(*it, Child(field, selector)); !s.ok()) return s;
    }
  }
  auto namespaces = ArrayAt(term, "namespaces", field);
  if (!namespaces.ok()) return namespaces.status();
  for (size_t i = 0; i < namespaces->size(); ++i) {
    const std::string at = Index(Child(field, "namespaces"), i);
    if (absl::Status s = ExpectString((*namespaces)[i], at); !s.ok()) return s;
    const std::string& name = (*namespaces)[i].get_ref<const std::string&>();
    if (absl::Status s = Problem(Dns1123LabelProblem(name), name, at); !s.ok()) return s;
  }
  for (const char* keys : {"matchLabelKeys", "mismatchLabelKeys"}) {
    auto list = ArrayAt(term, keys, field);
    if (!list.ok()) return list.status();
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string at = Index(Child(field, keys), i);
      if (absl::Status s = ExpectString((*list)[i], at); !s.ok()) return s;
      if (absl::Status s = QualifiedName((*list)[i].get<std::string>(), at); !s.ok()) return s;
    }
  }
  auto topology_key = StringAt(term, "topologyKey", field);
  if (!topology_key.ok()) return topology_key.status();
  if (topology_key->empty()) return Invalid(Child(field, "topologyKey"), "is required");
  return QualifiedName(*topology_key, Child(field, "topologyKey"));
}

absl::Status PodAffinity(const Json& affinity, const std::string& field) {
  const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  const char* kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
  if (absl::Status s = ExpectFields(affinity, {kRequired, kPreferred}, field); !s.ok()) return s;
  auto required = ArrayAt(affinity, kRequired, field);
  if (!required.ok()) return required.status();
  for (size_t i = 0; i < required->size(); ++i) {
    absl::Status s = PodAffinityTerm((*required)[i], Index(Child(field, kRequired), i));
    if (!s.ok()) return s;
  }
  return PreferredTerms(affinity, kPreferred, "podAffinityTerm", PodAffinityTerm, field);
}

// Resources measured in whole units that cannot be overcommitted: every
// name with a domain other than kubernetes.io.
bool IsExtendedResource(absl::string_view name) {
  return absl::StrContains(name, "/") && !absl::StrContains(name, "kubernetes.io/");
}

bool IsHugePages(absl::string_view name) { return absl::StartsWith(name, "hugepages-"); }

absl::Status ResourceName(absl::string_view name, const std::string& field) {
  if (absl::Status s = QualifiedName(name, field); !s.ok()) return s;
  if (!absl::StrContains(name, "/")) {
    if (name == "cpu" || name == "memory" || name == "ephemeral-storage" || IsHugePages(name)) {
      return absl::OkStatus();
    }
    return Invalid(field, absl::StrCat(QuoteUserText(name),
                                       " is not a standard resource for containers (cpu, memory, "
                                       "ephemeral-storage, hugepages-<size>) nor a domain-"
                                       "qualified extended resource"));
  }
  if (IsExtendedResource(name) && !QualifiedNameProblem(absl::StrCat("requests.", name)).empty()) {
    return Invalid(field, absl::StrCat(QuoteUserText(name),
                                       " does not follow the extended resource name standard"));
  }
  return absl::OkStatus();
}

// A quantity as a string ("500m") or a number (2), in thousandths.
absl::StatusOr<int64_t> QuantityMilli(const Json& value, const std::string& field) {
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number() && std::isfinite(value.get<double>())) {
    text = value.dump();
  } else {
    return Invalid(field, absl::StrCat("must be a quantity (a string such as \"500m\" or "
                                       "\"16Gi\", or a number), not ",
                                       Article(value)));
  }
  auto q = ParseQuantity(text);
  if (!q.ok()) {
    return Invalid(field, absl::StrCat(QuoteUserText(text), " is not a quantity"));
  }
  if (q->milli < 0) {
    return Invalid(field, absl::StrCat(QuoteUserText(text), " must be greater than or equal to 0"));
  }
  return q->milli;
}

absl::Status ResourceValues(const Json& resources, const std::string& field,
                            std::map<std::string, int64_t>* requests,
                            std::map<std::string, int64_t>* limits) {
  if (absl::Status s = ExpectFields(resources, {"requests", "limits", "claims"}, field); !s.ok()) {
    return s;
  }
  for (const char* list : {"requests", "limits"}) {
    auto it = resources.find(list);
    if (it == resources.end() || it->is_null()) continue;
    const std::string at = Child(field, list);
    if (!it->is_object()) {
      return Invalid(at, absl::StrCat("must be a map of resource names to quantities ({\"cpu\": "
                                      "\"2\"}), not ",
                                      Article(*it)));
    }
    for (const auto& [name, value] : it->items()) {
      const std::string key_at = Key(at, name);
      if (absl::Status s = ResourceName(name, key_at); !s.ok()) return s;
      // null deletes the value in a merge.
      if (value.is_null()) continue;
      auto milli = QuantityMilli(value, key_at);
      if (!milli.ok()) return milli.status();
      if (IsExtendedResource(name) && *milli % 1000 != 0) {
        return Invalid(
            key_at,
            absl::StrCat(QuoteUserText(value.is_string() ? value.get<std::string>() : value.dump()),
                         " must be an integer"));
      }
      (std::string(list) == "requests" ? *requests : *limits)[name] = *milli;
    }
  }
  return absl::OkStatus();
}

std::string FormatMilli(int64_t milli) {
  if (milli % 1000 == 0) return absl::StrCat(milli / 1000);
  return absl::StrCat(milli, "m");
}

}  // namespace

absl::Status ValidateDnsSubdomainName(const Json& name, const std::string& field) {
  if (absl::Status s = ExpectString(name, field); !s.ok()) return s;
  const std::string& text = name.get_ref<const std::string&>();
  return Problem(Dns1123SubdomainProblem(text), text, field);
}

absl::Status ValidateLabels(const Json& labels, const std::string& field) {
  if (!labels.is_object()) {
    return Invalid(field, absl::StrCat("must be a map of strings, not ", Article(labels)));
  }
  for (const auto& [key, value] : labels.items()) {
    if (absl::Status s = QualifiedName(key, field + " key"); !s.ok()) return s;
    if (absl::Status s = ExpectString(value, Key(field, key)); !s.ok()) return s;
    const std::string& text = value.get_ref<const std::string&>();
    if (absl::Status s = Problem(LabelValueProblem(text), text, Key(field, key)); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAnnotations(const Json& annotations, const std::string& field) {
  if (!annotations.is_object()) {
    return Invalid(field, absl::StrCat("must be a map of strings, not ", Article(annotations)));
  }
  size_t total = 0;
  for (const auto& [key, value] : annotations.items()) {
    // As the apiserver does: keys are checked in lower case.
    if (absl::Status s =
            Problem(QualifiedNameProblem(absl::AsciiStrToLower(key)), key, field + " key");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = ExpectString(value, Key(field, key)); !s.ok()) return s;
    total += key.size() + value.get_ref<const std::string&>().size();
  }
  if (total > kMaxAnnotationsTotalBytes) {
    return Invalid(field, absl::StrCat("annotations total ", total,
                                       " bytes (keys and values), "
                                       "more than the ",
                                       kMaxAnnotationsTotalBytes, " Kubernetes allows"));
  }
  return absl::OkStatus();
}

absl::Status ValidateTolerations(const Json& tolerations, const std::string& field) {
  if (absl::Status s = ExpectArray(tolerations, field); !s.ok()) return s;
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const std::string at = Index(field, i);
    const Json& t = tolerations[i];
    if (absl::Status s =
            ExpectFields(t, {"key", "operator", "value", "effect", "tolerationSeconds"}, at);
        !s.ok()) {
      return s;
    }
    auto key = StringAt(t, "key", at);
    if (!key.ok()) return key.status();
    auto op = StringAt(t, "operator", at);
    if (!op.ok()) return op.status();
    auto value = StringAt(t, "value", at);
    if (!value.ok()) return value.status();
    auto effect = StringAt(t, "effect", at);
    if (!effect.ok()) return effect.status();
    if (!key->empty()) {
      if (absl::Status s = QualifiedName(*key, Child(at, "key")); !s.ok()) return s;
    }
    // Empty means Equal.
    if (!op->empty()) {
      if (absl::Status s = OneOf(*op, {"Exists", "Equal"}, Child(at, "operator")); !s.ok()) {
        return s;
      }
    }
    if (key->empty() && *op != "Exists") {
      return Invalid(Child(at, "operator"),
                     "must be Exists when key is empty (which tolerates every taint)");
    }
    if (*op == "Exists" && !value->empty()) {
      return Invalid(Child(at, "value"), "must be empty when operator is Exists");
    }
    if (*op != "Exists") {
      if (absl::Status s = Problem(LabelValueProblem(*value), *value, Child(at, "value"));
          !s.ok()) {
        return s;
      }
    }
    if (!effect->empty()) {
      absl::Status s =
          OneOf(*effect, {"NoSchedule", "PreferNoSchedule", "NoExecute"}, Child(at, "effect"));
      if (!s.ok()) return s;
    }
    if (auto seconds = t.find("tolerationSeconds"); seconds != t.end() && !seconds->is_null()) {
      if (!seconds->is_number_integer()) {
        return Invalid(Child(at, "tolerationSeconds"),
                       absl::StrCat("must be an integer, not ", Article(*seconds)));
      }
      if (*effect != "NoExecute") {
        return Invalid(Child(at, "effect"), "must be NoExecute when tolerationSeconds is set");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateAffinity(const Json& affinity, const std::string& field) {
  if (absl::Status s =
          ExpectFields(affinity, {"nodeAffinity", "podAffinity", "podAntiAffinity"}, field);
      !s.ok()) {
    return s;
  }
  if (auto it = affinity.find("nodeAffinity"); it != affinity.end() && !it->is_null()) {
    if (absl::Status s = NodeAffinity(*it, Child(field, "nodeAffinity")); !s.ok()) return s;
  }
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    if (auto it = affinity.find(kind); it != affinity.end() && !it->is_null()) {
      if (absl::Status s = PodAffinity(*it, Child(field, kind)); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateResourceValues(const Json& resources, const std::string& field) {
  std::map<std::string, int64_t> requests, limits;
  return ResourceValues(resources, field, &requests, &limits);
}

absl::Status ValidateResourceRequirements(const Json& resources, const std::string& field) {
  std::map<std::string, int64_t> requests, limits;
  if (absl::Status s = ResourceValues(resources, field, &requests, &limits); !s.ok()) return s;
  for (const auto& [name, request] : requests) {
    const std::string at = Key(Child(field, "requests"), name);
    const bool overcommit = !IsExtendedResource(name) && !IsHugePages(name);
    auto limit = limits.find(name);
    if (limit == limits.end()) {
      if (overcommit) continue;
      return Invalid(Child(field, "limits"),
                     absl::StrCat("must set ", QuoteUserText(name),
                                  ", which cannot be overcommitted, when it is requested"));
    }
    if (!overcommit && request != limit->second) {
      return Invalid(at, absl::StrCat(FormatMilli(request), " must be equal to the ",
                                      QuoteUserText(name), " limit ", FormatMilli(limit->second)));
    }
    if (request > limit->second) {
      return Invalid(at, absl::StrCat(FormatMilli(request), " must be at most the ",
                                      QuoteUserText(name), " limit ", FormatMilli(limit->second)));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePodTemplate(const Json& pod_template, const std::string& field) {
  if (absl::Status s = ExpectObject(pod_template, field); !s.ok()) return s;
  if (auto metadata = pod_template.find("metadata");
      metadata != pod_template.end() && !metadata->is_null()) {
    const std::string at = Child(field, "metadata");
    if (absl::Status s = ExpectObject(*metadata, at); !s.ok()) return s;
    if (auto it = metadata->find("labels"); it != metadata->end() && !it->is_null()) {
      if (absl::Status s = ValidateLabels(*it, Child(at, "labels")); !s.ok()) return s;
    }
    if (auto it = metadata->find("annotations"); it != metadata->end() && !it->is_null()) {
      if (absl::Status s = ValidateAnnotations(*it, Child(at, "annotations")); !s.ok()) return s;
    }
  }
  auto spec = pod_template.find("spec");
  if (spec == pod_template.end() || spec->is_null()) return absl::OkStatus();
  const std::string at = Child(field, "spec");
  if (absl::Status s = ExpectObject(*spec, at); !s.ok()) return s;
  for (const char* name : {"schedulerName", "priorityClassName"}) {
    if (auto it = spec->find(name); it != spec->end() && !it->is_null()) {
      if (it->is_string() && it->get_ref<const std::string&>().empty()) continue;
      if (absl::Status s = ValidateDnsSubdomainName(*it, Child(at, name)); !s.ok()) return s;
    }
  }
  if (auto it = spec->find("nodeSelector"); it != spec->end() && !it->is_null()) {
    if (absl::Status s = ValidateLabels(*it, Child(at, "nodeSelector")); !s.ok()) return s;
  }
  if (auto it = spec->find("tolerations"); it != spec->end() && !it->is_null()) {
    if (absl::Status s = ValidateTolerations(*it, Child(at, "tolerations")); !s.ok()) return s;
  }
  if (auto it = spec->find("affinity"); it != spec->end() && !it->is_null()) {
    if (absl::Status s = ValidateAffinity(*it, Child(at, "affinity")); !s.ok()) return s;
  }
  for (const char* list : {"containers", "initContainers"}) {
    auto containers = ArrayAt(*spec, list, at);
    if (!containers.ok()) return containers.status();
    for (size_t i = 0; i < containers->size(); ++i) {
      const Json& c = (*containers)[i];
      const std::string container_at = Index(Child(at, list), i);
      if (absl::Status s = ExpectObject(c, container_at); !s.ok()) return s;
      if (auto it = c.find("resources"); it != c.end() && !it->is_null()) {
        absl::Status s = ValidateResourceRequirements(*it, Child(container_at, "resources"));
        if (!s.ok()) return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace wm::resolution
