#include "server/controllers/karta_status.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/common/json_path.h"
#include "server/common/kube_names.h"

namespace wm::controllers {
namespace {

constexpr char kTrue[] = "True";
constexpr char kFalse[] = "False";

// The object's conditions as written (an empty list when none).
Json CurrentConditions(const Json& object) {
  const Json* conditions = Find(object, {"status", "conditions"});
  return conditions != nullptr && conditions->is_array() ? *conditions : Json::array();
}

// The condition of `type` in `conditions`, or nullptr. Whatever the list
// holds (anyone may write status): FindString reads only strings.
const Json* ConditionOf(const Json& conditions, const std::string& type) {
  for (const Json& c : conditions) {
    if (FindString(c, {"type"}) == type) return &c;
  }
  return nullptr;
}

bool Matches(const Json& written, const Condition& wanted) {
  const Json* generation = Find(written, {"observedGeneration"});
  return FindString(written, {"status"}) == wanted.status &&
         FindString(written, {"reason"}) == wanted.reason &&
         FindString(written, {"message"}) == wanted.message && generation != nullptr &&
         generation->is_number_integer() &&
         generation->get<int64_t>() == wanted.observed_generation;
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

bool LabelsValid(const Gvk& gvk) {
  return LabelValueProblem(gvk.group).empty() && LabelValueProblem(gvk.version).empty() &&
         LabelValueProblem(gvk.kind).empty();
}

}  // namespace

DesiredKarta Desire(int64_t generation, const definitions::CheckedDefinition& checked,
                    const std::string& root_kind_problem) {
  DesiredKarta desired;
  if (checked.root_kind && LabelsValid(*checked.root_kind)) desired.labels = checked.root_kind;

  // Errors first: the message leads with why the definition is refused.
  for (bool errors : {true, false}) {
    for (const Finding& f : checked.findings) {
      if (f.is_error() == errors && desired.reported.size() < kMaxReportedFindings) {
        desired.reported.push_back(f);
      }
    }
  }
  std::vector<std::string> lines;
  for (const Finding& f : desired.reported) lines.push_back(definitions::FindingLine(f));
  if (checked.findings.size() > desired.reported.size()) {
    lines.push_back(absl::StrCat("and ", checked.findings.size() - desired.reported.size(),
                                 " more findings (wmctl validate lists them all)"));
  }
  bool valid = checked.valid();
  desired.conditions.push_back({kValidated, valid ? kTrue : kFalse,
                                valid ? "ValidationSucceeded" : "ValidationFailed",
                                absl::StrJoin(lines, "\n"), generation});

  std::string crd_message;
  if (!checked.root_kind) {
    crd_message = "the spec names no root component kind";
  } else if (!root_kind_problem.empty()) {
    crd_message = absl::StrCat(checked.root_kind->ToString(), ": ", root_kind_problem);
  }
  bool served = crd_message.empty();
  desired.conditions.push_back({kCrdExists, served ? kTrue : kFalse,
                                served ? "CRDFound" : "CRDNotFound", crd_message, generation});

  std::vector<std::string> not_true;
  if (!valid) not_true.push_back("Validated is False");
  if (!served) not_true.push_back("CRDExists is False");
  desired.conditions.push_back({kReady, not_true.empty() ? kTrue : kFalse,
                                not_true.empty() ? "Ready" : "NotReady",
                                absl::StrJoin(not_true, "; "), generation});
  return desired;
}

std::optional<Json> LabelsPatch(const Json& object, const DesiredKarta& desired) {
  const Json* labels = Find(object, {"metadata", "labels"});
  Json patch_labels = Json::object();
  auto want = [&](const char* key, const std::optional<std::string>& value) {
    const Json* current = labels != nullptr && labels->is_object() && labels->contains(key)
                              ? &(*labels)[key]
                              : nullptr;
    if (value) {
      if (current == nullptr || !current->is_string() || current->get<std::string>() != *value) {
        patch_labels[key] = *value;
      }
    } else if (current != nullptr) {
      patch_labels[key] = nullptr;  // a merge patch removes a key set to null
    }
  };
  const std::optional<Gvk>& gvk = desired.labels;
  want(kKartaGroupLabel, gvk ? std::optional<std::string>(gvk->group) : std::nullopt);
  want(kKartaVersionLabel, gvk ? std::optional<std::string>(gvk->version) : std::nullopt);
  want(kKartaKindLabel, gvk ? std::optional<std::string>(gvk->kind) : std::nullopt);
  if (patch_labels.empty()) return std::nullopt;
  return Json{{"metadata",
               {{"labels", std::move(patch_labels)},
                {"resourceVersion", FindString(object, {"metadata", "resourceVersion"})}}}};
}

std::optional<Json> StatusPatch(const Json& object, const DesiredKarta& desired, absl::Time now) {
  Json current = CurrentConditions(object);
  bool changed = false;
  for (const Condition& wanted : desired.conditions) {
    const Json* written = ConditionOf(current, wanted.type);
    changed = changed || written == nullptr || !Matches(*written, wanted);
  }
  if (!changed) return std::nullopt;

  Json conditions = Json::array();
  // Conditions of other types, written by others, stay as they are.
  for (const Json& c : current) {
    bool ours = false;
    for (const Condition& wanted : desired.conditions) {
      ours = ours || FindString(c, {"type"}) == wanted.type;
    }
    if (!ours) conditions.push_back(c);
  }
  for (const Condition& wanted : desired.conditions) {
    const Json* written = ConditionOf(current, wanted.type);
    std::string transition = written != nullptr && FindString(*written, {"status"}) == wanted.status
                                 ? FindString(*written, {"lastTransitionTime"})
                                 : "";
    if (transition.empty()) transition = Rfc3339(now);
    conditions.push_back({{"type", wanted.type},
                          {"status", wanted.status},
                          {"reason", wanted.reason},
                          {"message", wanted.message},
                          {"observedGeneration", wanted.observed_generation},
                          {"lastTransitionTime", transition}});
  }
  // A merge patch replaces the whole list: the resourceVersion makes sure
  // it is the list that was read.
  return Json{
      {"metadata", {{"resourceVersion", FindString(object, {"metadata", "resourceVersion"})}}},
      {"status", {{"conditions", std::move(conditions)}}}};
}

std::vector<Finding> NewFindings(const Json& object, const DesiredKarta& desired) {
  absl::flat_hash_set<std::string> listed;
  Json conditions = CurrentConditions(object);
  if (const Json* validated = ConditionOf(conditions, kValidated)) {
    for (absl::string_view line : absl::StrSplit(FindString(*validated, {"message"}), '\n')) {
      listed.insert(std::string(line));
    }
  }
  std::vector<Finding> fresh;
  for (const Finding& f : desired.reported) {
    if (!listed.contains(definitions::FindingLine(f))) fresh.push_back(f);
  }
  return fresh;
}

}  // namespace wm::controllers
