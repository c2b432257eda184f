#ifndef WM_SERVER_EXPRESSIONS_NATIVE_VALUE_SIZE_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_VALUE_SIZE_H_

#include <cstddef>

#include "server/common/json.h"

namespace wm::expressions::native {

// About how many bytes a copy of `value` allocates: 16 per node plus the
// characters of strings and keys. The evaluator's memory bound charges it
// for every value it builds.
size_t ApproximateBytes(const Json& value);

// One unit of work, about one evaluation step: this many bytes of a string
// scanned, or one element of an array or object visited.
inline constexpr size_t kBytesPerWorkUnit = 16;

// The work of one pass over `value`'s top level, in those units: its
// string's bytes, or its elements. O(1); natives and operators charge it so
// that a step over a large value counts for more than a step over a small
// one.
size_t ShallowWorkUnits(const Json& value);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_VALUE_SIZE_H_
