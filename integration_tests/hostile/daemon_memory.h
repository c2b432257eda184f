#ifndef WM_INTEGRATION_TESTS_HOSTILE_DAEMON_MEMORY_H_
#define WM_INTEGRATION_TESTS_HOSTILE_DAEMON_MEMORY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/common/process_memory.h"

namespace wm::hostile {

// How the hostile suite and its soak read a running daemon's memory.

// The memory a daemon reports at its /metrics: process_resident_memory_bytes
// and workloadmap_heap_bytes by state ("allocated", "thread_cached",
// "active", "dirty", "metadata", "resident"; empty when the daemon runs
// without jemalloc), in bytes.
struct ReportedMemory {
  int64_t resident = 0;
  std::map<std::string, int64_t> heap;
};

// Scrapes the daemon's metrics on 127.0.0.1:`port`; nullopt when the scrape
// fails or does not report process_resident_memory_bytes.
std::optional<ReportedMemory> ScrapeMemory(int port);

// The resident set of process `pid` once it has settled: the daemon hands
// freed memory back over a few seconds after large requests (jemalloc's
// background thread), so a reading counts once the readings taken
// kSettleInterval apart over kSettleWindow lie within kSettledBytes of each
// other, or at `bound`. The window is longer than freed pages can stay: an
// arena holding fewer than 1024 dirty pages (4 MiB) is left alone for a
// whole decay time (dirty_decay_ms, 1 s: server/common/jemalloc_options.cc),
// so pages freed just after the background thread went to sleep stay
// resident up to twice that, and with several arenas a shorter window once
// took 25 MiB of them for settled memory.
inline constexpr absl::Duration kSettleInterval = absl::Milliseconds(500);
inline constexpr absl::Duration kSettleWindow = absl::Milliseconds(2500);
inline constexpr size_t kSettledBytes = size_t{256} << 10;
ResidentMemory SettledResidentMemory(absl::string_view pid, absl::Duration bound);

}  // namespace wm::hostile

#endif  // WM_INTEGRATION_TESTS_HOSTILE_DAEMON_MEMORY_H_
