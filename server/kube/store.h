#ifndef WM_SERVER_KUBE_STORE_H_
#define WM_SERVER_KUBE_STORE_H_

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "server/kube/object.h"
#include "server/kube/watch_stream.h"

namespace wm::kube {

// What consumers are told: ADDED (old null), MODIFIED (both), DELETED (new
// null; `old` is the last state the cache knew, which after a relist may be
// older than the deletion — client-go's "final state unknown").
struct Change {
  EventType type = EventType::kAdded;
  std::shared_ptr<const CachedObject> old_object, new_object;
};

// The objects of one resource, indexed by key ("namespace/name"), UID and
// owner UID. Thread-safe: writers (one reflector) and any number of readers;
// readers get immutable objects that stay valid after later updates.
class Store {
 public:
  // Applies one watch event and returns the change to deliver, if any.
  // ADDED for a known key is a modification; MODIFIED for an unknown key an
  // addition; DELETED for an unknown key changes nothing. A key whose UID
  // changed (deleted and recreated) becomes a deletion then an addition.
  std::vector<Change> Apply(EventType type, std::shared_ptr<const CachedObject> object);

  // Replaces the contents with a complete list (after a list or relist):
  // additions, modifications (resourceVersion differs), deletions for keys
  // not in the list, and delete-then-add for keys recreated with a new UID.
  std::vector<Change> Replace(std::vector<std::shared_ptr<const CachedObject>> objects);

  std::shared_ptr<const CachedObject> Get(const std::string& key) const;
  std::shared_ptr<const CachedObject> GetByUid(const std::string& uid) const;
  // Objects with an ownerReference (controller or not) to `owner_uid`.
  std::vector<std::shared_ptr<const CachedObject>> ListOwnedBy(const std::string& owner_uid) const;
  // A consistent snapshot of every object (in no particular order).
  std::vector<std::shared_ptr<const CachedObject>> List() const;
  size_t size() const;
  // Sum of the objects' ApproximateBytes().
  size_t ApproximateBytes() const;

 private:
  void InsertLocked(std::shared_ptr<const CachedObject> object);
  void EraseLocked(const CachedObject& object);

  // Index keys are views into the indexed objects' own strings (an object
  // stays alive while it is in the store), which halves the index memory.
  mutable std::shared_mutex mu_;
  absl::flat_hash_map<absl::string_view, std::shared_ptr<const CachedObject>> by_key_;
  absl::flat_hash_map<absl::string_view, std::shared_ptr<const CachedObject>> by_uid_;
  absl::flat_hash_map<std::string, absl::flat_hash_set<absl::string_view>> keys_by_owner_;
};

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_STORE_H_
