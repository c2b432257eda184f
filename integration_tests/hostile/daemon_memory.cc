#include "integration_tests/hostile/daemon_memory.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "integration_tests/hostile/raw_clients.h"

namespace wm::hostile {

std::optional<ReportedMemory> ScrapeMemory(int port) {
  HttpResult scrape =
      ExchangeHttp(port, "GET /metrics HTTP/1.1\r\nHost: daemon\r\n\r\n", absl::Seconds(5));
  if (scrape.status != 200) return std::nullopt;
  ReportedMemory memory;
  bool has_resident = false;
  constexpr absl::string_view kResident = "process_resident_memory_bytes ";
  constexpr absl::string_view kHeap = "workloadmap_heap_bytes{state=\"";
  for (absl::string_view line : absl::StrSplit(scrape.reply, '\n')) {
    double value = 0;
    if (absl::ConsumePrefix(&line, kResident)) {
      if (!absl::SimpleAtod(line, &value)) return std::nullopt;
      memory.resident = static_cast<int64_t>(value);
      has_resident = true;
    } else if (absl::ConsumePrefix(&line, kHeap)) {
      std::pair<absl::string_view, absl::string_view> state_value =
          absl::StrSplit(line, absl::MaxSplits("\"} ", 1));
      if (!absl::SimpleAtod(state_value.second, &value)) return std::nullopt;
      memory.heap[std::string(state_value.first)] = static_cast<int64_t>(value);
    }
  }
  if (!has_resident) return std::nullopt;
  return memory;
}

ResidentMemory SettledResidentMemory(absl::string_view pid, absl::Duration bound) {
  ResidentMemory last = ResidentMemoryOf(pid);
  const absl::Time deadline = absl::Now() + bound;
  while (last.total > 0 && absl::Now() < deadline) {
    absl::SleepFor(kSettleInterval);
    ResidentMemory now = ResidentMemoryOf(pid);
    const size_t change = now.total > last.total ? now.total - last.total : last.total - now.total;
    last = now;
    if (change < kSettledBytes) break;
  }
  return last;
}

}  // namespace wm::hostile
