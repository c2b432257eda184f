#include "server/common/json_merge_patch.h"

#include <utility>

namespace wm {

void MergePatch(Json& target, const Json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = Json::object();
  Json::object_t& members = target.get_ref<Json::object_t&>();
  const Json::object_t& changes = patch.get_ref<const Json::object_t&>();
  Json::object_t::Container merged;
  merged.reserve(members.size() + changes.size());
  auto member = members.begin();
  auto change = changes.begin();
  while (member != members.end() || change != changes.end()) {
    if (change == changes.end() || (member != members.end() && member->first < change->first)) {
      merged.push_back(std::move(*member++));  // untouched by the patch
      continue;
    }
    const bool both = member != members.end() && member->first == change->first;
    if (!change->second.is_null()) {  // null: removed, or nothing to remove
      Json value = both ? std::move(member->second) : Json();
      MergePatch(value, change->second);
      merged.emplace_back(change->first, std::move(value));
    }
    if (both) ++member;
    ++change;
  }
  members.AssignUnsorted(std::move(merged));  // in order already: taken as it is
}

}  // namespace wm
