#ifndef WM_SERVER_COMMON_PROCESS_MEMORY_H_
#define WM_SERVER_COMMON_PROCESS_MEMORY_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace wm {

// A process's resident set, in bytes: what the kernel counts against a
// memory limit.
struct ResidentMemory {
  size_t total = 0;
  // Of `total`, pages backed by files or shared (code and data of the
  // program and its libraries); the rest is anonymous (heap, stacks).
  size_t shared = 0;
  size_t anonymous() const { return total - shared; }
};

// The resident set of the process `pid` names in /proc ("self", or a
// number), from /proc/PID/statm; zeros when it cannot be read (the process
// is gone).
ResidentMemory ResidentMemoryOf(absl::string_view pid);

// Its total alone.
inline size_t ResidentBytesOf(absl::string_view pid) { return ResidentMemoryOf(pid).total; }

// This process's resident set.
inline size_t ResidentBytes() { return ResidentBytesOf("self"); }

}  // namespace wm

#endif  // WM_SERVER_COMMON_PROCESS_MEMORY_H_
