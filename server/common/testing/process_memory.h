#ifndef WM_SERVER_COMMON_TESTING_PROCESS_MEMORY_H_
#define WM_SERVER_COMMON_TESTING_PROCESS_MEMORY_H_

// For tests that measure this process's memory. Header-only: any layer's
// tests may include it.

#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace wm::testing {

// True in builds with AddressSanitizer or ThreadSanitizer. Their allocators
// keep freed memory in quarantine (so resident memory says nothing about
// leaks or trimming), and their runtimes reserve terabytes of address space
// (so jq workers run without an address-space limit, jq_worker_main.cc).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// This process's resident memory in bytes (/proc/self/statm).
inline int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace wm::testing

#endif  // WM_SERVER_COMMON_TESTING_PROCESS_MEMORY_H_
