#ifndef WM_BENCH_PROCESS_STATS_H_
#define WM_BENCH_PROCESS_STATS_H_

#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <string>

namespace wm::bench {

// The resident set of the process `pid` names in /proc ("self", or a
// number), from /proc/PID/statm; 0 when it cannot be read (the process
// is gone).
inline size_t ResidentBytesOf(const std::string& pid) {
  std::ifstream statm("/proc/" + pid + "/statm");
  size_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// This process's resident set.
inline size_t ResidentBytes() { return ResidentBytesOf("self"); }

}  // namespace wm::bench

#endif  // WM_BENCH_PROCESS_STATS_H_
