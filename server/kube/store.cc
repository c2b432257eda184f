#include "server/kube/store.h"

namespace wm::kube {

void Store::InsertLocked(std::shared_ptr<const CachedObject> object) {
  // Erase before inserting: a kept entry would keep its key view into the
  // object it replaces.
  if (!object->uid().empty()) {
    by_uid_.erase(absl::string_view(object->uid()));
    by_uid_.emplace(object->uid(), object);
  }
  for (const OwnerReference& owner : object->owners()) {
    keys_by_owner_[owner.uid].insert(object->key());
  }
  absl::string_view key = object->key();
  by_key_.erase(key);
  by_key_.emplace(key, std::move(object));
}

void Store::EraseLocked(const CachedObject& object) {
  if (auto it = by_uid_.find(object.uid()); it != by_uid_.end() && it->second.get() == &object) {
    by_uid_.erase(it);
  }
  for (const OwnerReference& owner : object.owners()) {
    auto it = keys_by_owner_.find(owner.uid);
    if (it == keys_by_owner_.end()) continue;
    it->second.erase(object.key());
    if (it->second.empty()) keys_by_owner_.erase(it);
  }
  by_key_.erase(absl::string_view(object.key()));
}

std::vector<Change> Store::Apply(EventType type, std::shared_ptr<const CachedObject> object) {
  std::vector<Change> changes;
  std::unique_lock lock(mu_);
  auto it = by_key_.find(object->key());
  std::shared_ptr<const CachedObject> old = it == by_key_.end() ? nullptr : it->second;
  if (type == EventType::kDeleted) {
    if (old == nullptr) return changes;
    EraseLocked(*old);
    changes.push_back({EventType::kDeleted, std::move(old), nullptr});
    return changes;
  }
  if (old != nullptr && old->uid() != object->uid()) {
    EraseLocked(*old);
    changes.push_back({EventType::kDeleted, std::move(old), nullptr});
    old = nullptr;
  }
  if (old != nullptr) EraseLocked(*old);
  InsertLocked(object);
  changes.push_back(
      {old == nullptr ? EventType::kAdded : EventType::kModified, std::move(old), object});
  return changes;
}

std::vector<Change> Store::Replace(std::vector<std::shared_ptr<const CachedObject>> objects) {
  std::vector<Change> changes;
  std::unique_lock lock(mu_);
  absl::flat_hash_set<absl::string_view> listed;
  listed.reserve(objects.size());
  for (const auto& object : objects) listed.insert(object->key());
  std::vector<std::shared_ptr<const CachedObject>> gone;
  for (const auto& [key, object] : by_key_) {
    if (!listed.contains(key)) gone.push_back(object);
  }
  for (auto& object : gone) {
    EraseLocked(*object);
    changes.push_back({EventType::kDeleted, std::move(object), nullptr});
  }
  for (auto& object : objects) {
    auto it = by_key_.find(object->key());
    std::shared_ptr<const CachedObject> old = it == by_key_.end() ? nullptr : it->second;
    if (old != nullptr && old->uid() != object->uid()) {
      EraseLocked(*old);
      changes.push_back({EventType::kDeleted, std::move(old), nullptr});
      old = nullptr;
    }
    if (old != nullptr && old->resource_version() == object->resource_version()) continue;
    if (old != nullptr) EraseLocked(*old);
    InsertLocked(object);
    changes.push_back({old == nullptr ? EventType::kAdded : EventType::kModified, std::move(old),
                       std::move(object)});
  }
  return changes;
}

std::shared_ptr<const CachedObject> Store::Get(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

std::shared_ptr<const CachedObject> Store::GetByUid(const std::string& uid) const {
  std::shared_lock lock(mu_);
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const CachedObject>> Store::ListOwnedBy(
    const std::string& owner_uid) const {
  std::vector<std::shared_ptr<const CachedObject>> out;
  std::shared_lock lock(mu_);
  auto it = keys_by_owner_.find(owner_uid);
  if (it == keys_by_owner_.end()) return out;
  for (absl::string_view key : it->second) out.push_back(by_key_.at(key));
  return out;
}

std::vector<std::shared_ptr<const CachedObject>> Store::List() const {
  std::vector<std::shared_ptr<const CachedObject>> out;
  std::shared_lock lock(mu_);
  out.reserve(by_key_.size());
  for (const auto& [key, object] : by_key_) out.push_back(object);
  return out;
}

size_t Store::size() const {
  std::shared_lock lock(mu_);
  return by_key_.size();
}

size_t Store::ApproximateBytes() const {
  std::shared_lock lock(mu_);
  size_t bytes = 0;
  for (const auto& [key, object] : by_key_) bytes += object->ApproximateBytes();
  return bytes;
}

}  // namespace wm::kube
