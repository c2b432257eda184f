#include "server/kube/document_cache.h"

#include <iterator>
#include <string>
#include <utility>

#include "server/common/json_size.h"

namespace wm::kube {

DocumentCache::DocumentCache(size_t max_bytes) : max_bytes_(max_bytes) {}

std::shared_ptr<const Json> DocumentCache::Document(
    const std::shared_ptr<const CachedObject>& object) {
  if (object->shape() != ObjectShape::kCompactPod || max_bytes_ == 0) return object->Document();
  {
    std::unique_lock lock(mu_);
    if (std::shared_ptr<const Json> kept = Kept(object)) {
      ++stats_.hits;
      return kept;
    }
    ++stats_.misses;
  }
  // Built outside the lock: it is the slow part, and other threads ask for
  // other objects meanwhile.
  std::shared_ptr<const Json> tree = object->Document();
  // The tree, its shared root, and the entry in the list and the map.
  size_t bytes = TreeBytes(*tree) + sizeof(Json) + sizeof(Entry) + 8 * sizeof(void*);
  if (bytes > max_bytes_) return tree;
  std::unique_lock lock(mu_);
  // Another thread may have built and kept one meanwhile.
  if (std::shared_ptr<const Json> kept = Kept(object)) return kept;
  lru_.push_front(Entry{object.get(), object, tree, bytes});
  entries_.emplace(object.get(), lru_.begin());
  stats_.bytes += bytes;
  Shrink();
  return tree;
}

std::shared_ptr<const Json> DocumentCache::Kept(const std::shared_ptr<const CachedObject>& object) {
  auto it = entries_.find(object.get());
  if (it == entries_.end()) return nullptr;
  Lru::iterator entry = it->second;
  if (entry->object.lock() != object) {
    // The address of an object that is gone, now another object's.
    Remove(entry);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, entry);
  return entry->tree;
}

void DocumentCache::Remove(Lru::iterator entry) {
  stats_.bytes -= entry->bytes;
  entries_.erase(entry->key);
  lru_.erase(entry);
}

void DocumentCache::Shrink() {
  while (stats_.bytes > max_bytes_ && !lru_.empty()) Remove(std::prev(lru_.end()));
}

DocumentCache::Stats DocumentCache::stats() const {
  std::unique_lock lock(mu_);
  Stats stats = stats_;
  stats.trees = lru_.size();
  return stats;
}

namespace {

// An object's members are one vector of (key, value) pairs (see
// internal::SortedObject); a string keeps up to 15 characters inline
// (libstdc++). nlohmann holds an object, an array and a string each in an
// allocation of its own.
struct HeapBytes {
  static constexpr size_t kMember = sizeof(Json::object_t::value_type);
  static size_t Text(const std::string& s) { return s.size() > 15 ? s.capacity() + 1 : 0; }

  size_t Value(const Json& value) const {
    switch (value.type()) {
      case Json::value_t::object: {
        // The vector's unused tail; the members themselves count in Member.
        const Json::object_t& members = value.get_ref<const Json::object_t&>();
        return sizeof(Json::object_t) + (members.capacity() - members.size()) * kMember;
      }
      case Json::value_t::array:
        return sizeof(Json::array_t) +
               value.get_ref<const Json::array_t&>().capacity() * sizeof(Json);
      case Json::value_t::string:
        return sizeof(std::string) + Text(value.get_ref<const std::string&>());
      default:
        return 0;  // held in the value itself
    }
  }
  // The member's pair in its object's vector, and its key's text.
  size_t Member(const std::string& key) const { return kMember + Text(key); }
};

}  // namespace

size_t TreeBytes(const Json& value) { return JsonTreeCost(value, HeapBytes()); }

}  // namespace wm::kube
