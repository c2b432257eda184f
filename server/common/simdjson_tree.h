#ifndef WM_SERVER_COMMON_SIMDJSON_TREE_H_
#define WM_SERVER_COMMON_SIMDJSON_TREE_H_

// Our JSON tree (Json, nlohmann's) from simdjson's DOM, for the places that
// parse with simdjson because it is several times faster than nlohmann's
// parser (watch events, inline requests, compact pods expanded for
// resolution) but hand the result to code that reads Json.

#include <simdjson.h>

#include <cstddef>
#include <optional>

#include "server/common/json.h"

namespace wm {

// The tree nlohmann's parser builds from the same text: an integer that
// fits an int64 and is not negative is unsigned, as nlohmann types it; a
// key that repeats keeps its last value. (One difference: nlohmann types
// `-0` int64, which simdjson does not tell from `0`; both are the number 0.) Nullopt when arrays
// and objects nest deeper than `max_depth` (the root's own level counts as 1, as ParseJson's bound
// does).
std::optional<Json> JsonFromSimdjson(const simdjson::dom::element& value, size_t max_depth);

}  // namespace wm

#endif  // WM_SERVER_COMMON_SIMDJSON_TREE_H_
