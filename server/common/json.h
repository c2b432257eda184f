#ifndef WM_SERVER_COMMON_JSON_H_
#define WM_SERVER_COMMON_JSON_H_

#include <nlohmann/json.hpp>

namespace wm {

// The document model of every layer. Objects keep their keys sorted, which
// is also the order gojq (upstream's engine) iterates them in: converting a
// Json to a jq value therefore reproduces upstream's iteration order.
using Json = nlohmann::json;

}  // namespace wm

#endif  // WM_SERVER_COMMON_JSON_H_
