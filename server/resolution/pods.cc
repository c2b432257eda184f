#include "server/resolution/pods.h"

#include "absl/strings/str_cat.h"

namespace wm::resolution {

namespace {

// The member `key` of `object`, or null when absent or `object` is not an
// object.
const Json* Member(const Json* object, absl::string_view key) {
  if (object == nullptr || !object->is_object()) return nullptr;
  return FindMember(*object, key);
}

// A view of the string member `key`, or "".
absl::string_view StringMember(const Json* object, absl::string_view key) {
  return StringViewOf(Member(object, key));
}

// The controller ownerReference's uid in `metadata`, or "".
absl::string_view ControllerUidIn(const Json* metadata) {
  const Json* refs = Member(metadata, "ownerReferences");
  if (refs == nullptr || !refs->is_array()) return "";
  for (const Json& ref : *refs->get_ptr<const Json::array_t*>()) {
    const Json* controller = Member(&ref, "controller");
    if (controller != nullptr && controller->is_boolean() &&
        *controller->get_ptr<const Json::boolean_t*>()) {
      return StringMember(&ref, "uid");
    }
  }
  return "";
}

}  // namespace

// Each of metadata, spec and status is looked up once: a resolution reads
// every pod of its workload, thousands for a large job.
PodFacts ReadPod(const Json& pod) {
  PodFacts facts;
  facts.object = &pod;
  const Json* metadata = Member(&pod, "metadata");
  const Json* spec = Member(&pod, "spec");
  const Json* status = Member(&pod, "status");
  facts.name = StringMember(metadata, "name");
  facts.namespace_ = StringMember(metadata, "namespace");
  facts.uid = StringMember(metadata, "uid");
  facts.controller_uid = ControllerUidIn(metadata);
  facts.node = StringMember(spec, "nodeName");
  facts.phase = StringMember(status, "phase");
  absl::string_view scheduled_reason, ready_reason;
  if (const Json* conditions = Member(status, "conditions");
      conditions != nullptr && conditions->is_array()) {
    // Only two types matter: a condition's status is read for them alone.
    for (const Json& c : *conditions->get_ptr<const Json::array_t*>()) {
      absl::string_view type = StringMember(&c, "type");
      if (type == "Ready") {
        absl::string_view value = StringMember(&c, "status");
        facts.ready = value == "True";
        if (value == "False") ready_reason = StringMember(&c, "reason");
      } else if (type == "PodScheduled" && StringMember(&c, "status") == "False") {
        scheduled_reason = StringMember(&c, "reason");
      }
    }
  }
  absl::string_view status_reason = StringMember(status, "reason");
  facts.reason = !scheduled_reason.empty() ? scheduled_reason
                 : !status_reason.empty()  ? status_reason
                                           : (facts.ready ? absl::string_view() : ready_reason);
  if (spec != nullptr) {
    auto requests = PodSpecRequests(*spec);
    if (requests.ok()) {
      facts.requests = *std::move(requests);
    } else {
      facts.requests_problem = absl::StrCat("spec.", requests.status().message());
    }
  }
  return facts;
}

absl::string_view ControllerUid(const Json& object) {
  return ControllerUidIn(Member(&object, "metadata"));
}

bool OwnedBy(const PodFacts& pod, absl::string_view root_uid, const OwnerIndex& owners,
             int max_depth) {
  if (root_uid.empty()) return false;
  // A Pod workload owns itself.
  if (pod.uid == root_uid) return true;
  absl::string_view owner = pod.controller_uid;
  for (int depth = 0; depth < max_depth; ++depth) {
    if (owner.empty()) return false;
    if (owner == root_uid) return true;
    auto it = owners.find(owner);
    if (it == owners.end()) return false;
    owner = ControllerUid(*it->second);
  }
  return false;
}

}  // namespace wm::resolution
