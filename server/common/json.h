#ifndef WM_SERVER_COMMON_JSON_H_
#define WM_SERVER_COMMON_JSON_H_

#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/string_view.h"
#include "server/common/internal/sorted_object.h"

namespace wm {

// The document model of every layer. Objects keep their keys sorted, which
// is also the order gojq (upstream's engine) iterates them in: converting a
// Json to a jq value therefore reproduces upstream's iteration order. Their
// members sit in one sorted vector (internal::SortedObject, which says why),
// so inserting into an object invalidates references to its other members.
using Json = nlohmann::basic_json<internal::SortedObject>;

// The member `key` of `object`, or null when it has none. REQUIRES:
// object.is_object(). Looked up in nlohmann's underlying object: its own
// find() wraps the answer in an iterator whose making and comparing cost
// about as much as the lookup, and lookups in pods' trees are what a
// resolution of a large job does most.
inline const Json* FindMember(const Json& object, absl::string_view key) {
  // get_ptr, not get_ref: get_ref's check is an out-of-line call.
  const Json::object_t& members = *object.get_ptr<const Json::object_t*>();
  auto it = members.find(key);
  return it == members.end() ? nullptr : &it->second;
}

// A view of `value` when it is a string, else "" (also when `value` is
// null). Through get_ptr: get_ref's checked path is a call of its own, and
// resolutions read a dozen strings per pod.
inline absl::string_view StringViewOf(const Json* value) {
  const std::string* text = value != nullptr ? value->get_ptr<const std::string*>() : nullptr;
  return text != nullptr ? absl::string_view(*text) : absl::string_view();
}

// An object of `members` in any order, sorted once; of a repeated key the
// last value is kept. How to build an object from a source that is not in
// key order (a protobuf map, a hash map): setting its members one by one
// would insert each in the middle, quadratic in their number.
inline Json ObjectOf(Json::object_t::Container members) {
  Json object = Json::object();
  object.get_ref<Json::object_t&>().AssignUnsorted(std::move(members));
  return object;
}

}  // namespace wm

#endif  // WM_SERVER_COMMON_JSON_H_
