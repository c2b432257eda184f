#ifndef WM_SERVER_WEB_PROTO_JSON_H_
#define WM_SERVER_WEB_PROTO_JSON_H_

#include <string>

#include "google/protobuf/message.h"

namespace wm::web {

// `message` in protobuf's JSON mapping as the API answers it (what grpcurl
// and the clients print): lowerCamelCase names, 64-bit integers as strings,
// enums by name, and every field present, default values included, so a
// browser reads `phase` without asking whether it is there. One line.
std::string ToJson(const google::protobuf::Message& message);

}  // namespace wm::web

#endif  // WM_SERVER_WEB_PROTO_JSON_H_
