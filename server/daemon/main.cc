// workloadmapd: the resolution service. Wires definitions (catalog, files,
// Karta objects), the watch caches of one or more clusters (or a snapshot
// directory), the workload index and the gRPC API (the Daemon, daemon.h);
// see docs/ARCHITECTURE.md for the threads and who owns what.
#include <pthread.h>
#include <signal.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "server/daemon/config.h"
#include "server/daemon/daemon.h"
#include "server/daemon/log.h"

int main(int argc, char** argv) {
  using namespace wm::daemon;
  auto parsed = ParseConfig(std::vector<std::string>(argv, argv + argc));
  if (!parsed.ok()) {
    std::cerr << "workloadmapd: " << parsed.status().message() << "\n";
    return 2;
  }
  if (parsed->help) {
    std::cout << Usage();
    return 0;
  }
  ConfigureLog(parsed->config.log_format, parsed->config.log_level);
  // Debian builds Abseil without NDEBUG, so every absl::Mutex lock inside
  // gRPC would also update the deadlock detector's lock graph, on every
  // call. The daemon's own locks are std::mutex; it has nothing to detect.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Signals are taken by one thread with sigwait; every thread inherits the
  // mask, so none is interrupted.
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return Daemon(std::move(parsed->config)).Run();
}
