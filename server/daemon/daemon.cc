// Daemon::Run and what it starts first and stops last.
#include "server/daemon/daemon.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/common/cpus.h"
#include "server/daemon/log.h"
#include "server/expressions/jq_engine.h"
#include "server/expressions/native_engine.h"

namespace wm::daemon {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

absl::StatusOr<std::unique_ptr<expressions::Engine>> Daemon::StartEngine() {
  if (config_.jq_engine == "native") {
    auto engine = expressions::NewNativeEngine();
    if (engine.ok()) Log(LogLevel::kInfo, "jq engine started", {{"engine", "native"}});
    return engine;
  }
  expressions::JqEngineOptions engine_options;
  engine_options.workers = config_.jq_workers;
  engine_options.memory_limit_bytes = config_.jq_memory_limit_bytes;
  auto engine = expressions::NewJqEngine(engine_options);
  if (!engine.ok()) return engine;
  if (auto plan = expressions::PlanJqPool(engine_options, AvailableCpus()); plan.ok()) {
    Log(LogLevel::kInfo, "jq engine started",
        {{"engine", "libjq"},
         {"workers", absl::StrCat(plan->workers)},
         {"worker_memory_limit", absl::StrCat(plan->worker_memory_limit_bytes >> 20, "Mi")}});
  }
  return engine;
}

int Daemon::Run() {
  auto engine = StartEngine();
  if (!engine.ok()) return Fatal("the jq engine did not start", engine.status());
  engine_ = *std::move(engine);
  index::WorkloadIndex::Options index_options;
  index_options.history = static_cast<size_t>(config_.watch_history);
  index_options.pod_tree_cache_bytes = static_cast<size_t>(config_.pod_tree_cache_bytes);
  index_ = std::make_unique<index::WorkloadIndex>(*engine_, index_options);
  if (absl::Status s = StartClusters(); !s.ok()) return Fatal("no cluster to serve", s);
  index_->Start();
  AddControllers();
  AddCatalogPublications();
  for (auto& cluster : live_) {
    if (absl::Status s = cluster->Start(*index_); !s.ok()) {
      return Fatal(absl::StrCat("cluster ", cluster->name(), " did not start"), s);
    }
    Log(LogLevel::kInfo, "watching cluster", {{"cluster", cluster->name()}});
  }
  if (snapshot_) snapshot_->Feed(*index_);
  if (absl::Status s = StartLeaderElection(); !s.ok()) {
    return Fatal("leader election did not start", s);
  }
  // After the elector, which they ask before each write.
  for (auto& controller : karta_controllers_) controller->Start();
  for (auto& controller : pod_group_controllers_) {
    if (absl::Status s = controller->Start(); !s.ok()) {
      return Fatal("the PodGroup role did not start", s);
    }
  }
  for (auto& publication : publications_) publication->Start();
  AddMetrics();
  if (absl::Status s = StartServer(); !s.ok()) return Fatal("gRPC did not start", s);
  // After the server, whose access control the metrics read.
  if (absl::Status s = StartHttp(); !s.ok()) return Fatal("metrics did not start", s);
  if (absl::Status s = StartWebhook(); !s.ok()) return Fatal("the webhook did not start", s);
  std::thread readiness([this] { AwaitReadiness(); });
  std::thread signals([this] { AwaitSignal(); });
  server_->Wait();
  stopping_ = true;
  readiness.join();
  signals.join();
  StopWork();
  if (http_) http_->Stop();
  Log(LogLevel::kInfo, "stopped");
  return 0;
}

int Daemon::Fatal(absl::string_view what, const absl::Status& status) {
  Log(LogLevel::kError, what, {{"error", std::string(status.message())}});
  // Stopped as at a normal exit: the index's thread reads the clusters,
  // which as members go before it (a start that failed while a large
  // snapshot was being resolved crashed here).
  StopWork();
  return 1;
}

void Daemon::StopWork() {
  if (webhook_) webhook_->Stop();
  // Writers stop before the Lease is given up: none writes beside the
  // next leader. It is given up at once, so that another replica leads
  // without waiting out the lease.
  for (auto& controller : karta_controllers_) controller->Stop();
  for (auto& controller : pod_group_controllers_) controller->Stop();
  for (auto& publication : publications_) publication->Stop();
  if (elector_) elector_->Stop(/*release=*/true);
  for (auto& cluster : live_) cluster->Stop();
  if (index_) index_->Stop();
}

const std::string& Daemon::Identity() {
  if (!identity_.empty()) return identity_;
  identity_ = config_.leader_election_identity;
  if (identity_.empty()) {
    const char* pod = std::getenv("POD_NAME");
    char host[256] = {};
    if (pod == nullptr || *pod == '\0') ::gethostname(host, sizeof(host) - 1);
    absl::BitGen random;
    identity_ = absl::StrCat(pod != nullptr && *pod != '\0' ? pod : host, "-",
                             absl::Hex(absl::Uniform<uint32_t>(random), absl::kZeroPad8));
  }
  return identity_;
}

void Daemon::AwaitReadiness() {
  absl::Time listening = absl::Now();
  while (!stopping_) {
    bool synced = true;
    for (index::Cluster* c : index_->clusters()) synced = synced && c->InitialSyncDone();
    if (synced) {
      for (auto& cluster : live_) cluster->cache().WaitForIdle();
      index_->WaitForIdle();
      if (stopping_) return;
      SetServing(true);
      absl::Time now = absl::Now();
      Log(LogLevel::kInfo, "ready",
          {{"workloads", std::to_string(index_->List().size())},
           {"after", absl::FormatDuration(now - started_)},
           {"after_listening", absl::FormatDuration(now - listening)}});
      return;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

void Daemon::AwaitSignal() {
  sigset_t set = TerminationSignals();
  int signal = 0;
  sigwait(&set, &signal);
  Log(LogLevel::kInfo, "shutting down", {{"signal", strsignal(signal)}});
  SetServing(false);
  for (auto& listener : unix_listeners_) listener->Stop();
  server_->Shutdown(std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(config_.shutdown_grace));
  // The rest (stopping informers and workers) takes well under a second;
  // never let a stuck connection keep a terminated pod alive.
  std::thread([] {
    absl::SleepFor(absl::Seconds(15));
    Log(LogLevel::kError, "shutdown did not finish in 15 s after the grace period; exiting");
    _exit(1);
  }).detach();
}

}  // namespace wm::daemon
