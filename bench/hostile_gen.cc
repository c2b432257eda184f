// Hostile load for the soak of bench/run-hostile-soak: every case of the
// hostile-input suite (integration_tests/hostile/cases.h) sent round-robin
// at a fixed rate to a running workloadmapd, each answer checked against the
// case's expected codes and message, while --idle-connections connections
// to the metrics port send half a request head and are reopened as the
// server drops them (slow clients holding its slots).
//
//   hostile_gen --address 127.0.0.1:50051 --metrics-address 127.0.0.1:9090 --rate 20
//
// With --settle-every, it pauses that often: it stops sending, waits for the
// calls in flight to end and then --settle-pause more, and reads the
// daemon's resident set (--daemon-pid) once it has settled (readings 500 ms
// apart over 2.5 s within 256 KiB, or kSettleBound: SettledResidentMemory).
// Those readings are what the daemon keeps of the hostile load, without the working memory of
// requests being served (bounded on its own: --max-message-bytes, --grpc-memory-limit).
//
// The daemon must be set up as the cases assume (cases.h: the seed
// snapshot and --definitions integration_tests/hostile/definitions.yaml). Prints one
// JSON object: calls, cases, unexpected (answers with a code or message the
// case does not allow, or later than its bound), unexpected_cases (their
// names, at most 20), by_code, dropped (sends skipped because every sender
// was busy), max_ms, idle_reconnects, and with --settle-every paused_ticks
// (sends skipped while settling) and settled (one {"seconds", "settled_ms"
// (from the last answer), "rss_kb", "rss_anonymous_kb", "heap_<state>_kb"...}
// per pause, seconds from the start; the heap figures
// are the daemon's workloadmap_heap_bytes, read right after the RSS). Exit
// status: 0 if every answer was as expected, 1 if not, 2 for bad flags.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "integration_tests/hostile/cases.h"
#include "integration_tests/hostile/daemon_memory.h"
#include "integration_tests/hostile/raw_clients.h"
#include "server/common/json.h"
#include "server/common/process_memory.h"

namespace wm::bench {
namespace {

using hostile::HostileCase;
using hostile::HttpCase;

// How long a settled reading may wait for the resident set to settle.
constexpr absl::Duration kSettleBound = absl::Seconds(15);

struct Flags {
  std::string address;
  std::string metrics_address;
  double rate = 20;
  absl::Duration duration = absl::Seconds(60);
  int senders = 8;
  int idle_connections = 32;
  std::string daemon_pid;
  absl::Duration settle_every = absl::ZeroDuration();
  absl::Duration settle_pause = absl::Seconds(3);
  // Only the cases whose names contain one of these (all when empty).
  std::vector<std::string> only_cases;
};

constexpr char kUsage[] = R"(Usage: hostile_gen --address ADDR --metrics-address HOST:PORT [FLAGS]

  --address ADDR            HOST:PORT of workloadmapd's gRPC listener (required)
  --metrics-address H:P     its metrics port (required; HTTP cases and idle clients)
  --rate RPS                hostile calls per second (20)
  --duration D              how long (60s)
  --senders N               calls in flight at most; a send finding none free
                            is dropped and counted (8)
  --idle-connections N      half-sent connections held on the metrics port (32)
  --settle-every D          pause this often and read the daemon's resident set
                            once no call is in flight (0: never; needs --daemon-pid)
  --settle-pause D          how long after the last call, at least, to read it (3s)
  --daemon-pid PID          the daemon's process id
  --cases S1,S2,...         only the cases whose names contain one of these
                            (to find which cases cost the normal calls most)
)";

bool ParseFlags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return false;
    }
    bool ok = true;
    if (arg == "--address") {
      f.address = value;
    } else if (arg == "--metrics-address") {
      f.metrics_address = value;
    } else if (arg == "--rate") {
      ok = absl::SimpleAtod(value, &f.rate) && f.rate > 0;
    } else if (arg == "--duration") {
      ok = absl::ParseDuration(value, &f.duration) && f.duration > absl::ZeroDuration();
    } else if (arg == "--senders") {
      ok = absl::SimpleAtoi(value, &f.senders) && f.senders > 0;
    } else if (arg == "--idle-connections") {
      ok = absl::SimpleAtoi(value, &f.idle_connections) && f.idle_connections >= 0;
    } else if (arg == "--settle-every") {
      ok = absl::ParseDuration(value, &f.settle_every) && f.settle_every >= absl::ZeroDuration();
    } else if (arg == "--settle-pause") {
      ok = absl::ParseDuration(value, &f.settle_pause) && f.settle_pause >= absl::ZeroDuration();
    } else if (arg == "--cases") {
      f.only_cases = absl::StrSplit(value, ',', absl::SkipEmpty());
      ok = !f.only_cases.empty();
    } else if (arg == "--daemon-pid") {
      int pid = 0;
      ok = absl::SimpleAtoi(value, &pid) && pid > 0;
      f.daemon_pid = value;
    } else {
      ok = false;
    }
    if (!ok) return false;
  }
  return !f.address.empty() && !f.metrics_address.empty() &&
         (f.settle_every == absl::ZeroDuration() || !f.daemon_pid.empty());
}

// One case of either kind, as the round-robin sends them.
struct Case {
  const HostileCase* rpc = nullptr;
  const HttpCase* http = nullptr;
  const std::string& name() const { return rpc ? rpc->name : http->name; }
};

// What the senders found, under one mutex (a few dozen calls a second).
class Tally {
 public:
  void Record(const Case& c, const std::string& code, absl::Duration elapsed, bool expected) {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_;
    ++by_code_[code];
    max_ = std::max(max_, elapsed);
    if (!expected) {
      ++unexpected_;
      if (unexpected_cases_.size() < 20) unexpected_cases_.insert(c.name());
    }
  }
  void Dropped() {
    std::lock_guard<std::mutex> lock(mu_);
    ++dropped_;
  }
  void Paused() {
    std::lock_guard<std::mutex> lock(mu_);
    ++paused_;
  }
  // `heap` is HeapFigures's answer.
  void Settled(absl::Duration since_start, absl::Duration since_last_answer,
               const ResidentMemory& resident, Json heap) {
    std::lock_guard<std::mutex> lock(mu_);
    Json reading = {{"seconds", absl::ToInt64Seconds(since_start)},
                    {"settled_ms", absl::ToInt64Milliseconds(since_last_answer)},
                    {"rss_kb", static_cast<int64_t>(resident.total >> 10)},
                    {"rss_anonymous_kb", static_cast<int64_t>(resident.anonymous() >> 10)}};
    reading.update(heap);
    settled_.push_back(std::move(reading));
  }
  int unexpected() const {
    std::lock_guard<std::mutex> lock(mu_);
    return unexpected_;
  }
  Json ToJson(size_t cases, int idle_reconnects) const {
    std::lock_guard<std::mutex> lock(mu_);
    Json by_code = Json::object();
    for (const auto& [code, n] : by_code_) by_code[code] = n;
    return Json{{"calls", calls_},
                {"cases", cases},
                {"unexpected", unexpected_},
                {"unexpected_cases",
                 std::vector<std::string>(unexpected_cases_.begin(), unexpected_cases_.end())},
                {"by_code", by_code},
                {"dropped", dropped_},
                {"max_ms", absl::ToDoubleMilliseconds(max_)},
                {"idle_reconnects", idle_reconnects},
                {"paused_ticks", paused_},
                {"settled", settled_}};
  }

 private:
  mutable std::mutex mu_;
  int calls_ = 0, unexpected_ = 0, dropped_ = 0, paused_ = 0;
  Json settled_ = Json::array();
  std::map<std::string, int> by_code_;
  std::set<std::string> unexpected_cases_;
  absl::Duration max_;
};

// The daemon's account of its heap from its /metrics
// (workloadmap_heap_bytes{state}): {"heap_<state>_kb": kB} for each state,
// or {} when the daemon does not export it or the scrape fails.
Json HeapFigures(int metrics_port) {
  Json figures = Json::object();
  if (std::optional<hostile::ReportedMemory> memory = hostile::ScrapeMemory(metrics_port)) {
    for (const auto& [state, bytes] : memory->heap) {
      figures[absl::StrCat("heap_", state, "_kb")] = bytes >> 10;
    }
  }
  return figures;
}

// Sends one case and records whether its answer is one the case allows.
void Send(const Case& c, const std::shared_ptr<grpc::Channel>& channel, int metrics_port,
          Tally& tally) {
  if (c.rpc != nullptr) {
    hostile::RpcResult r =
        hostile::CallRaw(channel, c.rpc->method, c.rpc->request, c.rpc->bound + absl::Seconds(5),
                         /*max_responses=*/1, c.rpc->metadata);
    bool expected = std::find(c.rpc->codes.begin(), c.rpc->codes.end(), r.status.error_code()) !=
                        c.rpc->codes.end() &&
                    r.elapsed <= c.rpc->bound;
    if (expected && !c.rpc->mention.empty()) {
      std::string answer = r.status.error_message();
      for (const std::string& response : r.responses) answer += response;
      expected = absl::StrContains(answer, c.rpc->mention);
    }
    tally.Record(c, absl::StrCat("grpc_", r.status.error_code()), r.elapsed, expected);
    return;
  }
  hostile::HttpResult r =
      hostile::ExchangeHttp(metrics_port, c.http->request, c.http->bound + absl::Seconds(5));
  bool expected = std::find(c.http->statuses.begin(), c.http->statuses.end(), r.status) !=
                      c.http->statuses.end() &&
                  r.elapsed <= c.http->bound;
  tally.Record(c, absl::StrCat("http_", r.status), r.elapsed, expected);
}

int Run(const Flags& flags) {
  int metrics_port = 0;
  if (size_t colon = flags.metrics_address.rfind(':');
      colon == std::string::npos ||
      !absl::SimpleAtoi(flags.metrics_address.substr(colon + 1), &metrics_port)) {
    std::fprintf(stderr, "hostile_gen: --metrics-address must be HOST:PORT\n");
    return 2;
  }
  const std::vector<HostileCase> rpc_cases = hostile::AllCases();
  const std::vector<HttpCase> http_cases = hostile::HttpCases();
  std::vector<Case> cases;
  for (const HostileCase& c : rpc_cases) cases.push_back({&c, nullptr});
  for (const HttpCase& c : http_cases) cases.push_back({nullptr, &c});
  if (!flags.only_cases.empty()) {
    std::erase_if(cases, [&](const Case& c) {
      return std::none_of(flags.only_cases.begin(), flags.only_cases.end(),
                          [&](const std::string& s) { return absl::StrContains(c.name(), s); });
    });
    if (cases.empty()) {
      std::fprintf(stderr, "hostile_gen: no case name contains any of --cases\n");
      return 2;
    }
  }

  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  args.SetMaxReceiveMessageSize(-1);
  auto channel = grpc::CreateCustomChannel(flags.address, grpc::InsecureChannelCredentials(), args);
  Tally tally;
  std::atomic<bool> stop{false};

  // Slow clients: each holds a connection with half a request head; the
  // server cuts them at its head deadline, and they come back.
  std::atomic<int> idle_reconnects{0};
  std::thread idle([&] {
    std::deque<std::unique_ptr<hostile::IdleConnection>> held;
    while (!stop.load()) {
      while (static_cast<int>(held.size()) < flags.idle_connections) {
        held.push_back(std::make_unique<hostile::IdleConnection>(metrics_port, "GET /metr"));
      }
      absl::SleepFor(absl::Seconds(1));
      // The oldest are past the server's head deadline by now: renew them.
      for (int i = 0; i < flags.idle_connections / 5 + 1 && !held.empty(); ++i) {
        held.pop_front();
        idle_reconnects.fetch_add(1);
      }
    }
  });

  // Senders take the next due case from a one-slot hand-off; a tick that
  // finds every sender busy is dropped, so the rate never piles up calls.
  std::mutex mu;
  std::condition_variable cv;
  // Signalled when a sender finishes a call, for a pause to wait on.
  std::condition_variable finished;
  std::deque<size_t> due;
  int busy = 0;
  std::vector<std::thread> senders;
  for (int i = 0; i < flags.senders; ++i) {
    senders.emplace_back([&] {
      for (;;) {
        size_t index;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return stop.load() || !due.empty(); });
          if (due.empty()) return;
          index = due.front();
          due.pop_front();
          ++busy;
        }
        Send(cases[index], channel, metrics_port, tally);
        std::lock_guard<std::mutex> lock(mu);
        --busy;
        finished.notify_all();
      }
    });
  }
  // A pause: no call in flight, then settle_pause, then one reading. Ticks
  // that fall due meanwhile are skipped, not sent in a burst afterwards.
  absl::Time start = absl::Now();
  absl::Time next_settle = flags.settle_every > absl::ZeroDuration() ? start + flags.settle_every
                                                                     : absl::InfiniteFuture();
  absl::Time resumed = start;
  auto settle = [&] {
    {
      std::unique_lock<std::mutex> lock(mu);
      finished.wait(lock, [&] { return busy == 0 && due.empty(); });
    }
    const absl::Time quiet = absl::Now();
    absl::SleepFor(flags.settle_pause);
    // The RSS first: the scrape itself allocates in the daemon.
    const ResidentMemory resident = hostile::SettledResidentMemory(flags.daemon_pid, kSettleBound);
    tally.Settled(absl::Now() - start, absl::Now() - quiet, resident, HeapFigures(metrics_port));
    resumed = absl::Now();
    while (next_settle <= resumed) next_settle += flags.settle_every;
  };
  for (size_t i = 0;; ++i) {
    absl::Time at = start + absl::Seconds(static_cast<double>(i) / flags.rate);
    if (at - start >= flags.duration) break;
    if (at >= next_settle) settle();
    if (at < resumed) {
      tally.Paused();
      continue;
    }
    absl::SleepFor(at - absl::Now());
    std::lock_guard<std::mutex> lock(mu);
    if (busy + static_cast<int>(due.size()) >= flags.senders) {
      tally.Dropped();
      continue;
    }
    due.push_back(i % cases.size());
    cv.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop.store(true);
  }
  cv.notify_all();
  for (std::thread& t : senders) t.join();
  idle.join();
  std::printf("%s\n", tally.ToJson(cases.size(), idle_reconnects.load()).dump().c_str());
  return tally.unexpected() == 0 ? 0 : 1;
}

}  // namespace
}  // namespace wm::bench

int main(int argc, char** argv) {
  wm::bench::Flags flags;
  if (!wm::bench::ParseFlags(argc, argv, flags)) {
    std::fputs(wm::bench::kUsage, stderr);
    return 2;
  }
  return wm::bench::Run(flags);
}
