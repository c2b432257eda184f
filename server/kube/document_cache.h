#ifndef WM_SERVER_KUBE_DOCUMENT_CACHE_H_
#define WM_SERVER_KUBE_DOCUMENT_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "server/common/json.h"
#include "server/kube/object.h"

namespace wm::kube {

// The trees of compact cached objects (pods), kept between resolutions.
//
// Why: the cache holds a pod as a few hundred bytes of JSON text
// (ObjectShape::kCompactPod) and rebuilds its tree for every resolution of
// its workload (CachedObject::Document), then frees it. For a job of
// thousands of pods that is most of what resolving it costs, and a pod
// changing its status has the whole job resolved again: every other pod's
// tree is rebuilt unchanged. Here a tree outlives its resolution, up to a
// byte budget, least recently used first out.
//
// A tree belongs to one version of an object: a changed pod is a new
// CachedObject, so its old tree is never returned for it. Trees of objects
// gone from the watch cache stay until pushed out. Objects of other shapes
// keep their own tree and pass straight through.
//
// Thread-safe: the index's resolver threads and RPC handlers share one.
class DocumentCache {
 public:
  // `max_bytes`: what the kept trees may take, by TreeBytes; 0 keeps none.
  explicit DocumentCache(size_t max_bytes);

  DocumentCache(const DocumentCache&) = delete;
  DocumentCache& operator=(const DocumentCache&) = delete;

  // object->Document(): the tree kept for this very object when there is
  // one, else a new one, kept. REQUIRES: `object` is not null.
  std::shared_ptr<const Json> Document(const std::shared_ptr<const CachedObject>& object);

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;  // trees built for compact objects
    size_t bytes = 0;     // kept now
    size_t trees = 0;
  };
  Stats stats() const;

 private:
  struct Entry {
    const CachedObject* key;
    // The object the tree was built from: a later object at the same
    // address is another object, and finds this one expired.
    std::weak_ptr<const CachedObject> object;
    std::shared_ptr<const Json> tree;
    size_t bytes;
  };
  using Lru = std::list<Entry>;  // most recently used first

  // The tree kept for this very object, now the most recently used; null
  // when there is none. An entry of another object that was at the same
  // address is removed. REQUIRES: mu_ held.
  std::shared_ptr<const Json> Kept(const std::shared_ptr<const CachedObject>& object);
  // Forgets one entry: its bytes, its place in the list and in the map.
  // REQUIRES: mu_ held.
  void Remove(Lru::iterator entry);
  // Drops the least recently used trees until the kept ones fit the
  // budget. REQUIRES: mu_ held.
  void Shrink();

  const size_t max_bytes_;
  mutable std::mutex mu_;
  Lru lru_;
  absl::flat_hash_map<const CachedObject*, Lru::iterator> entries_;
  Stats stats_;
};

// About how many bytes of the heap `value` holds below itself (not counting
// its own Json): its members' nodes and keys, its arrays, and its strings.
size_t TreeBytes(const Json& value);

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_DOCUMENT_CACHE_H_
