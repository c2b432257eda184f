#ifndef WM_SERVER_KUBE_OBJECT_H_
#define WM_SERVER_KUBE_OBJECT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/common/gvk.h"
#include "server/common/json.h"

namespace simdjson::dom {
class element;
}

namespace wm::kube {

// How much of an object the cache keeps.
enum class ObjectShape {
  // Everything but metadata.managedFields and the
  // kubectl.kubernetes.io/last-applied-configuration annotation.
  kFull,
  // A pod reduced to what resolution and pod selectors read: name,
  // namespace, uid, resourceVersion, creationTimestamp, deletionTimestamp,
  // labels, annotations, ownerReferences; spec.nodeName, spec.schedulerName
  // (for the PodGroup role), the resources of
  // containers and init containers (and an init container's restartPolicy,
  // which makes it a sidecar), overhead, pod-level resources; status.phase,
  // status.reason and the type, status and reason of each condition.
  kCompactPod,
  // apiVersion, kind and metadata only (CustomResourceDefinitions: the
  // cache needs to know that they changed, not their schemas).
  kMetadata,
};

// The shape the daemon's caches (the watch cache, a snapshot) hold objects
// of kind `gvk` in: pods compact, as a cluster holds far more of them than
// of anything else; every other kind kFull.
ObjectShape CachedShapeFor(const Gvk& gvk);

struct OwnerReference {
  std::string uid;
  std::string kind;
  std::string name;
  bool controller = false;
};

// An immutable cached object. Shared between the store, change handlers
// and readers; never modified after decoding.
class CachedObject {
 public:
  // Decodes one object of a list or watch event.
  static absl::StatusOr<std::shared_ptr<const CachedObject>> Decode(
      const simdjson::dom::element& object, ObjectShape shape);
  // Builds one from a parsed document (snapshots, tests, inline objects);
  // null when it has no metadata.name.
  static std::shared_ptr<const CachedObject> FromJson(Json object, ObjectShape shape);

  // "namespace/name", or "name" for cluster-scoped objects.
  const std::string& key() const { return key_; }
  const std::string& uid() const { return uid_; }
  const std::string& resource_version() const { return resource_version_; }
  const std::vector<OwnerReference>& owners() const { return *owners_; }
  // UID of the controller ownerReference, or "".
  const std::string& controller_uid() const;
  ObjectShape shape() const { return shape_; }

  // The kept document. For kFull objects this is the stored tree; compact
  // pods are stored as JSON text fragments and parsed on each call.
  std::shared_ptr<const Json> Document() const;
  // Bytes held by this object (approximate; a fragment shared with other
  // objects counts its share), for memory accounting.
  size_t ApproximateBytes() const;

 private:
  struct Text {
    std::string text;
    std::vector<OwnerReference> owners;  // parsed, for the owner references part
  };
  using Fragment = std::shared_ptr<const Text>;
  // A compact pod is JSON text in parts. All but the identity (key, uid,
  // resourceVersion) are interned: the pods of one role share labels,
  // owner references, resources and, mostly, status, so a cached pod costs
  // a few hundred bytes instead of its full text.
  enum Part { kTimestamps, kLabels, kAnnotations, kOwnerRefs, kSpec, kStatus, kParts };

  class Pool;

  // Reads the key, uid, resourceVersion and, for shapes other than
  // kCompactPod, the owner references from `metadata`; fails without a name.
  static absl::Status DecodeIdentity(const simdjson::dom::element& metadata, CachedObject& cached);
  static void CompactParts(const simdjson::dom::element& pod,
                           const simdjson::dom::element& metadata, Fragment* parts);
  static std::shared_ptr<const std::vector<OwnerReference>> NoOwners();

  ObjectShape shape_ = ObjectShape::kFull;
  std::string key_, uid_, resource_version_;
  std::shared_ptr<const std::vector<OwnerReference>> owners_;
  std::shared_ptr<const Json> document_;  // kFull, kMetadata
  Fragment parts_[kParts];                // kCompactPod; null: absent
};

// "namespace/name" or "name".
std::string ObjectKey(std::string_view namespace_, std::string_view name);

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_OBJECT_H_
