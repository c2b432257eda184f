#include "server/kube/document_cache.h"

#include <string>
#include <utility>

namespace wm::kube {

DocumentCache::DocumentCache(size_t max_bytes) : max_bytes_(max_bytes) {}

std::shared_ptr<const Json> DocumentCache::Document(
    const std::shared_ptr<const CachedObject>& object) {
  if (object->shape() != ObjectShape::kCompactPod || max_bytes_ == 0) return object->Document();
  const CachedObject* key = object.get();
  {
    std::unique_lock lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      Lru::iterator entry = it->second;
      if (entry->object.lock() == object) {
        lru_.splice(lru_.begin(), lru_, entry);
        ++stats_.hits;
        return entry->tree;
      }
      // The address of an object that is gone, now another object's.
      stats_.bytes -= entry->bytes;
      lru_.erase(entry);
      entries_.erase(it);
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
  auto [it, inserted] = entries_.try_emplace(key);
  if (!inserted) {
    if (it->second->object.lock() == object) return it->second->tree;  // another thread's, kept
    stats_.bytes -= it->second->bytes;
    lru_.erase(it->second);
  }
  lru_.push_front(Entry{key, object, tree, bytes});
  it->second = lru_.begin();
  stats_.bytes += bytes;
  Shrink();
  return tree;
}

void DocumentCache::Shrink() {
  while (stats_.bytes > max_bytes_ && !lru_.empty()) {
    const Entry& last = lru_.back();
    stats_.bytes -= last.bytes;
    entries_.erase(last.key);
    lru_.pop_back();
  }
}

DocumentCache::Stats DocumentCache::stats() const {
  std::unique_lock lock(mu_);
  Stats stats = stats_;
  stats.trees = lru_.size();
  return stats;
}

size_t TreeBytes(const Json& value) {
  // libstdc++: a std::map node is 32 bytes of links and colour beside its
  // pair; a string keeps up to 15 characters inline. nlohmann holds an
  // object, an array and a string each in an allocation of its own.
  constexpr size_t kMapNode = 32;
  auto text = [](const std::string& s) { return s.size() > 15 ? s.capacity() + 1 : 0; };
  switch (value.type()) {
    case Json::value_t::object: {
      size_t bytes = sizeof(Json::object_t);
      for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
        bytes += kMapNode + sizeof(std::string) + text(key) + sizeof(Json) + TreeBytes(member);
      }
      return bytes;
    }
    case Json::value_t::array: {
      const auto& elements = value.get_ref<const Json::array_t&>();
      size_t bytes = sizeof(Json::array_t) + elements.capacity() * sizeof(Json);
      for (const Json& element : elements) bytes += TreeBytes(element);
      return bytes;
    }
    case Json::value_t::string:
      return sizeof(std::string) + text(value.get_ref<const std::string&>());
    default:
      return 0;  // held in the value itself
  }
}

}  // namespace wm::kube
