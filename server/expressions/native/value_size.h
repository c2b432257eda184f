#ifndef WM_SERVER_EXPRESSIONS_NATIVE_VALUE_SIZE_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_VALUE_SIZE_H_

#include <cstddef>

#include "server/common/json.h"

namespace wm::expressions::native {

// About how many bytes a copy of `value` allocates: 16 per node plus the
// characters of strings and keys. The evaluator's memory bound charges it
// for every value it builds.
size_t ApproximateBytes(const Json& value);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_VALUE_SIZE_H_
