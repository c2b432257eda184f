#include "server/common/heap.h"

#include <malloc.h>

namespace wm {

void ReturnFreeHeapToSystem() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace wm
