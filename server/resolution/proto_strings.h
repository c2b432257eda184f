#ifndef WM_SERVER_RESOLUTION_PROTO_STRINGS_H_
#define WM_SERVER_RESOLUTION_PROTO_STRINGS_H_

#include <string>

#include "absl/strings/string_view.h"

namespace wm::resolution {

// Sets the string field that `field` (a generated `mutable_` accessor)
// returns to `value`, unless `value` is empty. Proto3 strings have no
// presence: an empty one is the default already, while protobuf allocates
// a string for every set, empty or not, and an answer has dozens of empty
// ones (a pod's reason, a component's instance id, a gang's subgroup).
// REQUIRES: the field is empty (the message is new, or cleared).
template <typename Message>
void SetString(Message& message, std::string* (Message::*field)(), absl::string_view value) {
  if (!value.empty()) (message.*field)()->assign(value.data(), value.size());
}

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_PROTO_STRINGS_H_
