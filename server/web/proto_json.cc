#include "server/web/proto_json.h"

#include "google/protobuf/util/json_util.h"

namespace wm::web {

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string out;
  // Printing a message the service built cannot fail (its strings are
  // UTF-8: protobuf checks them when the message is parsed or serialized).
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

}  // namespace wm::web
