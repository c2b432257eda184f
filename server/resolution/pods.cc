#include "server/resolution/pods.h"

namespace wm::resolution {
namespace {

std::string Str(const Json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

const Json& Obj(const Json& object, const char* key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

}  // namespace

PodFacts ReadPod(const Json& pod) {
  PodFacts facts;
  facts.object = &pod;
  const Json& metadata = Obj(pod, "metadata");
  const Json& spec = Obj(pod, "spec");
  const Json& status = Obj(pod, "status");
  facts.name = Str(metadata, "name");
  facts.namespace_ = Str(metadata, "namespace");
  facts.uid = Str(metadata, "uid");
  facts.node = Str(spec, "nodeName");
  facts.phase = Str(status, "phase");
  std::string scheduled_reason, ready_reason;
  if (const Json& conditions = Obj(status, "conditions"); conditions.is_array()) {
    for (const Json& c : conditions) {
      std::string type = Str(c, "type"), value = Str(c, "status");
      if (type == "Ready") {
        facts.ready = value == "True";
        if (value == "False") ready_reason = Str(c, "reason");
      } else if (type == "PodScheduled" && value == "False") {
        scheduled_reason = Str(c, "reason");
      }
    }
  }
  facts.reason = !scheduled_reason.empty()        ? scheduled_reason
                 : !Str(status, "reason").empty() ? Str(status, "reason")
                                                  : (facts.ready ? "" : ready_reason);
  facts.requests = PodSpecRequests(spec);
  return facts;
}

std::string ControllerUid(const Json& object) {
  const Json& refs = Obj(Obj(object, "metadata"), "ownerReferences");
  if (!refs.is_array()) return "";
  for (const Json& ref : refs) {
    if (ref.is_object() && ref.value("controller", false)) return Str(ref, "uid");
  }
  return "";
}

bool OwnedBy(const Json& pod, const std::string& root_uid, const OwnerIndex& owners,
             int max_depth) {
  if (root_uid.empty()) return false;
  // A Pod workload owns itself.
  if (Str(Obj(pod, "metadata"), "uid") == root_uid) return true;
  const Json* current = &pod;
  for (int depth = 0; depth < max_depth; ++depth) {
    std::string owner = ControllerUid(*current);
    if (owner.empty()) return false;
    if (owner == root_uid) return true;
    auto it = owners.find(owner);
    if (it == owners.end()) return false;
    current = it->second;
  }
  return false;
}

}  // namespace wm::resolution
