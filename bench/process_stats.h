#ifndef WM_BENCH_PROCESS_STATS_H_
#define WM_BENCH_PROCESS_STATS_H_

#include <unistd.h>

#include <cstddef>
#include <fstream>

namespace wm::bench {

// This process's resident set, from /proc/self/statm.
inline size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace wm::bench

#endif  // WM_BENCH_PROCESS_STATS_H_
