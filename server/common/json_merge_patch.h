#ifndef WM_SERVER_COMMON_JSON_MERGE_PATCH_H_
#define WM_SERVER_COMMON_JSON_MERGE_PATCH_H_

#include "server/common/json.h"

namespace wm {

// Applies `patch` to `target` as RFC 7386 (JSON Merge Patch) says, with
// the result of nlohmann's basic_json::merge_patch: an object patch merges
// member by member (a null member removes the target's, an object member
// merges into the target's), anything else replaces the target.
//
// Why not nlohmann's: it inserts the patch's members one by one, and in our
// sorted objects (Json's internal::SortedObject) each insertion moves the
// members after it, so a large patch of a large object would cost their
// product. Here each object level is one merge of two sorted lists.
void MergePatch(Json& target, const Json& patch);

}  // namespace wm

#endif  // WM_SERVER_COMMON_JSON_MERGE_PATCH_H_
