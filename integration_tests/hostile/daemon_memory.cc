#include "integration_tests/hostile/daemon_memory.h"

#include <algorithm>
#include <deque>
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
  const absl::Time deadline = absl::Now() + bound;
  // The readings of the last kSettleWindow, oldest first.
  std::deque<std::pair<absl::Time, ResidentMemory>> window;
  window.emplace_back(absl::Now(), ResidentMemoryOf(pid));
  while (window.back().second.total > 0 && absl::Now() < deadline) {
    absl::SleepFor(kSettleInterval);
    window.emplace_back(absl::Now(), ResidentMemoryOf(pid));
    if (window.back().first - window.front().first < kSettleWindow) continue;
    while (window.back().first - window[1].first >= kSettleWindow) window.pop_front();
    const auto [low, high] = std::minmax_element(
        window.begin(), window.end(),
        [](const auto& a, const auto& b) { return a.second.total < b.second.total; });
    if (high->second.total - low->second.total < kSettledBytes) break;
  }
  return window.back().second;
}

}  // namespace wm::hostile
