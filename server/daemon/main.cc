// workloadmapd: the resolution service. Wires definitions (catalog, files,
// Karta objects), the watch caches of one or more clusters (or a snapshot
// directory), the workload index and the gRPC API; see
// docs/ARCHITECTURE.md for the threads and who owns what.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "catalog/catalog.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "server/access/access_reviewer.h"
#include "server/access/authenticator.h"
#include "server/access/token_reviewer.h"
#include "server/access/unix_peers.h"
#include "server/admission/https_server.h"
#include "server/admission/karta_review.h"
#include "server/admission/pod_review.h"
#include "server/admission/tls_files.h"
#include "server/common/cpus.h"
#include "server/common/file.h"
#include "server/common/json_path.h"
#include "server/controllers/catalog_publication.h"
#include "server/controllers/karta_controller.h"
#include "server/controllers/pod_group_controller.h"
#include "server/daemon/config.h"
#include "server/daemon/log.h"
#include "server/expressions/jq_engine.h"
#include "server/expressions/native_engine.h"
#include "server/index/live_cluster.h"
#include "server/index/snapshot_cluster.h"
#include "server/kube/auth/kubeconfig.h"
#include "server/kube/leader_election.h"
#include "server/observability/http_server.h"
#include "server/observability/metrics.h"
#include "server/platform/workload_metrics.h"
#include "server/rpc/service.h"
#include "server/rpc/unix_listener.h"
#include "server/rpc/unix_peer_registry.h"
#include "server/web/http_api.h"
#include "server/web/web_assets.h"

namespace wm::daemon {
namespace {

constexpr char kServiceName[] = "workloadmap.v1.WorkloadMap";

// The kubeconfig contexts to serve, each with its connection.
absl::StatusOr<std::vector<std::pair<std::string, kube::ClusterConnection>>> Connections(
    const Config& config) {
  std::vector<std::pair<std::string, kube::ClusterConnection>> out;
  if (config.in_cluster) {
    auto connection = kube::InClusterConnection();
    if (!connection.ok()) return connection.status();
    out.emplace_back("in-cluster", *std::move(connection));
    return out;
  }
  kube::KubeconfigOptions options;
  if (!config.kubeconfig.empty()) options.paths = {config.kubeconfig};
  std::vector<std::string> contexts = config.contexts;
  if (contexts.empty()) {
    auto current = kube::KubeconfigCurrentContext(options);
    if (!current.ok()) return current.status();
    if (current->empty()) {
      return absl::FailedPreconditionError(
          "the kubeconfig has no current-context: pass --context, --in-cluster or --snapshot");
    }
    contexts.push_back(*current);
  }
  for (const std::string& context : contexts) {
    options.context = context;
    auto connection = kube::LoadKubeconfig(options);
    if (!connection.ok()) {
      return absl::Status(connection.status().code(),
                          absl::StrCat("context ", context, ": ", connection.status().message()));
    }
    out.emplace_back(context, *std::move(connection));
  }
  return out;
}

std::shared_ptr<grpc::ServerCredentials> Credentials(const Config& config) {
  if (config.tls.cert_file.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      config.tls.require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
      : config.tls.client_ca_file.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                          : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_key_cert_pairs.push_back({ReadFileToString(config.tls.key_file).value_or(""),
                                        ReadFileToString(config.tls.cert_file).value_or("")});
  if (!config.tls.client_ca_file.empty()) {
    options.pem_root_certs = ReadFileToString(config.tls.client_ca_file).value_or("");
  }
  return grpc::SslServerCredentials(options);
}

// The signals that stop the daemon: SIGTERM and SIGINT.
sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

class Daemon {
 public:
  explicit Daemon(Config config) : config_(std::move(config)), started_(absl::Now()) {}

  // The engine --jq-engine names.
  absl::StatusOr<std::unique_ptr<expressions::Engine>> StartEngine() {
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

  int Run() {
    auto engine = StartEngine();
    if (!engine.ok()) return Fatal("the jq engine did not start", engine.status());
    engine_ = *std::move(engine);
    index::WorkloadIndex::Options index_options;
    index_options.history = static_cast<size_t>(config_.watch_history);
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
    // Given up at once, so that another replica leads without waiting out
    // the lease.
    if (webhook_) webhook_->Stop();
    // Writers stop before the Lease is given up: none writes beside the
    // next leader.
    for (auto& controller : karta_controllers_) controller->Stop();
    for (auto& controller : pod_group_controllers_) controller->Stop();
    for (auto& publication : publications_) publication->Stop();
    if (elector_) elector_->Stop(/*release=*/true);
    for (auto& cluster : live_) cluster->Stop();
    index_->Stop();
    if (http_) http_->Stop();
    Log(LogLevel::kInfo, "stopped");
    return 0;
  }

 private:
  int Fatal(absl::string_view what, const absl::Status& status) {
    Log(LogLevel::kError, what, {{"error", std::string(status.message())}});
    // Stopped as at a normal exit: the index's thread reads the clusters,
    // which as members go before it (a start that failed while a large
    // snapshot was being resolved crashed here).
    if (webhook_) webhook_->Stop();
    for (auto& controller : karta_controllers_) controller->Stop();
    for (auto& controller : pod_group_controllers_) controller->Stop();
    for (auto& publication : publications_) publication->Stop();
    if (elector_) elector_->Stop(/*release=*/true);
    for (auto& cluster : live_) cluster->Stop();
    if (index_) index_->Stop();
    return 1;
  }

  // This replica's name in the Lease and in what it writes:
  // --leader-election-identity, else $POD_NAME (else the host name) and a
  // random suffix. Computed once, on the main thread.
  const std::string& Identity() {
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

  // The writers of each live cluster (with --leader-elect: a daemon that
  // may not be alone writes only while it leads). Wired to their cluster's
  // cache here, before it starts; started once the elector exists.
  void AddControllers() {
    if (!config_.leader_elect || !config_.snapshot.empty()) return;
    AddPodGroupControllers();
    if (config_.karta_operator && !config_.cluster_definitions) {
      Log(LogLevel::kWarn,
          "the Karta operator is off: --no-cluster-definitions stops watching Kartas");
    }
    if (!config_.karta_operator || !config_.cluster_definitions) return;
    for (auto& cluster : live_) {
      controllers::KartaController::Options options;
      options.instance = Identity();
      options.on_error = [name = cluster->name()](const std::string& karta,
                                                  const absl::Status& status) {
        Log(LogLevel::kWarn, "karta operator",
            {{"cluster", name}, {"karta", karta}, {"error", std::string(status.message())}});
      };
      auto controller = std::make_unique<controllers::KartaController>(
          cluster->client(), cluster->cache(), *engine_,
          [this] { return elector_ != nullptr && elector_->IsLeader(); }, std::move(options));
      controllers::KartaController* c = controller.get();
      cluster->AddObserver(
          [c](const Gvk& gvk, const kube::Change& change) { c->OnChange(gvk, change); },
          [c] { c->ResyncAll(); });
      karta_controllers_.push_back(std::move(controller));
    }
  }

  // The schedulers whose PodGroups the leader writes, by schedulerName.
  controllers::PodGroupController::Options PodGroupOptions() const {
    controllers::PodGroupController::Options options;
    for (const auto& [names, scheduler] :
         {std::pair{&config_.kai_pod_groups, controllers::GangScheduler::kKai},
          std::pair{&config_.volcano_pod_groups, controllers::GangScheduler::kVolcano},
          std::pair{&config_.coscheduling_pod_groups, controllers::GangScheduler::kCoscheduling}}) {
      for (const std::string& name : *names) options.scheduler_names[name] = scheduler;
    }
    options.kai_native_kinds = config_.kai_pod_groups_for_native_kinds;
    return options;
  }

  // With --kai-pod-groups, --volcano-pod-groups or --coscheduling-pod-groups.
  void AddPodGroupControllers() {
    controllers::PodGroupController::Options base = PodGroupOptions();
    if (base.scheduler_names.empty()) return;
    for (auto& cluster : live_) {
      controllers::PodGroupController::Options options = base;
      options.on_error = [name = cluster->name()](const std::string& workload,
                                                  const absl::Status& status) {
        Log(LogLevel::kWarn, "pod groups",
            {{"cluster", name}, {"workload", workload}, {"error", std::string(status.message())}});
      };
      auto controller = std::make_unique<controllers::PodGroupController>(
          cluster->client(), cluster->cache(), *index_, cluster->name(),
          [this] { return elector_ != nullptr && elector_->IsLeader(); }, std::move(options));
      controllers::PodGroupController* c = controller.get();
      cluster->AddObserver(
          [c](const Gvk& gvk, const kube::Change& change) { c->OnChange(gvk, change); },
          [c] { c->OnDiscovery(); });
      pod_group_controllers_.push_back(std::move(controller));
    }
  }

  // With --publish-catalog: the leader applies the built-in catalog to
  // each cluster when it starts leading.
  void AddCatalogPublications() {
    if (!config_.publish_catalog) return;
    for (auto& cluster : live_) {
      publications_.push_back(std::make_unique<controllers::CatalogPublication>(
          cluster->client(), BuiltinCatalog(),
          [this] { return elector_ != nullptr && elector_->IsLeader(); },
          [name = cluster->name()](
              const absl::StatusOr<std::vector<controllers::PublishedKarta>>& results) {
            if (!results.ok()) {
              Log(LogLevel::kWarn, "catalog not published",
                  {{"cluster", name}, {"error", std::string(results.status().message())}});
              return;
            }
            std::map<std::string, int> counts;
            for (const controllers::PublishedKarta& karta : *results) {
              ++counts[controllers::OutcomeName(karta.outcome)];
              if (!karta.detail.empty()) {
                Log(LogLevel::kWarn, "catalog karta",
                    {{"cluster", name},
                     {"karta", karta.name},
                     {"outcome", controllers::OutcomeName(karta.outcome)},
                     {"detail", karta.detail}});
              }
            }
            std::vector<std::pair<std::string, std::string>> fields = {{"cluster", name}};
            for (const auto& [outcome, count] : counts) {
              fields.emplace_back(outcome, absl::StrCat(count));
            }
            Log(LogLevel::kInfo, "catalog publication", fields);
          }));
    }
  }

  // With --leader-elect: campaigns for the Lease in the first cluster.
  // Writers check elector_->IsLeader() before each write.
  absl::Status StartLeaderElection() {
    if (!config_.leader_elect) return absl::OkStatus();
    if (live_.empty()) {
      return absl::FailedPreconditionError(
          "--leader-elect needs a cluster (a kubeconfig or --in-cluster), not --snapshot");
    }
    const kube::ApiClient& client = live_.front()->client();
    const std::string& identity = Identity();
    kube::LeaderElectionConfig election{
        .namespace_ = config_.leader_election_namespace.empty() ? client.connection().namespace_
                                                                : config_.leader_election_namespace,
        .name = config_.leader_election_lease,
        .identity = identity,
        .lease_duration = config_.leader_election_lease_duration,
        .renew_deadline = config_.leader_election_renew_deadline,
        .retry_period = config_.leader_election_retry_period,
        .on_started_leading =
            [this, identity] {
              Log(LogLevel::kInfo, "started leading", {{"identity", identity}});
              // What the previous leader left is looked at again.
              for (auto& controller : karta_controllers_) controller->ResyncAll();
              for (auto& controller : pod_group_controllers_) controller->ResyncAll();
              for (auto& publication : publications_) publication->StartedLeading();
            },
        .on_stopped_leading =
            [identity] {
              Log(LogLevel::kInfo, "stopped leading", {{"identity", identity}});
            },
        .on_new_leader =
            [](const std::string& holder) {
              Log(LogLevel::kInfo, "leader", {{"holder", holder.empty() ? "none" : holder}});
            }};
    lease_ = absl::StrCat(election.namespace_, "/", election.name);
    auto elector = kube::LeaderElector::Create(client, std::move(election));
    if (!elector.ok()) return elector.status();
    elector_ = *std::move(elector);
    elector_->Start();
    Log(LogLevel::kInfo, "campaigning for leadership",
        {{"lease", lease_}, {"identity", elector_->identity()}});
    return absl::OkStatus();
  }

  absl::Status LoadBase(definitions::Registry& registry) const {
    if (config_.builtin_catalog) {
      if (absl::Status s = registry.AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
          !s.ok()) {
        return s;
      }
    }
    for (const std::string& path : config_.definitions) {
      if (absl::Status s = registry.AddPath(path); !s.ok()) return s;
    }
    for (const auto& r : registry.rejected()) {
      std::vector<std::string> errors;
      for (const auto& f : r.findings) {
        if (f.is_error()) errors.push_back(f.ToString());
      }
      Log(LogLevel::kWarn, "definition rejected",
          {{"definition", r.name}, {"source", r.source}, {"errors", absl::StrJoin(errors, "; ")}});
    }
    return absl::OkStatus();
  }

  absl::Status StartClusters() {
    if (!config_.snapshot.empty()) {
      auto registry = std::make_shared<definitions::Registry>(*engine_);
      if (absl::Status s = LoadBase(*registry); !s.ok()) return s;
      auto snapshot = index::SnapshotCluster::Load(config_.snapshot, std::move(registry));
      if (!snapshot.ok()) return snapshot.status();
      snapshot_ = *std::move(snapshot);
      index_->AddCluster(snapshot_.get());
      Log(LogLevel::kInfo, "serving a snapshot",
          {{"directory", config_.snapshot}, {"objects", std::to_string(snapshot_->size())}});
      return absl::OkStatus();
    }
    auto connections = Connections(config_);
    if (!connections.ok()) return connections.status();
    for (auto& [name, connection] : *connections) {
      index::LiveCluster::Options options;
      options.cache.namespace_ = config_.namespace_;
      options.cache.label_selector = config_.label_selector;
      options.cluster_definitions = config_.cluster_definitions;
      options.observed_kinds = controllers::PodGroupController::KindsToWatch(PodGroupOptions());
      live_.push_back(std::make_unique<index::LiveCluster>(
          name, std::move(connection), *engine_,
          [this](definitions::Registry& registry) { return LoadBase(registry); }, options));
      index_->AddCluster(live_.back().get());
    }
    return absl::OkStatus();
  }

  // With --authentication=kubernetes, the service's authenticator and a
  // reviewer of access per cluster; with none, neither (said loudly: anyone
  // who can connect is served). Tokens are reviewed by the first cluster's
  // apiserver, the one whose ServiceAccounts the callers (schedulers,
  // platforms) run as; each call on a workload is authorized by the
  // apiserver of the workload's cluster.
  void StartAccessControl(rpc::WorkloadMapService::Options& options) {
    if (config_.authentication != "kubernetes") {
      Log(LogLevel::kWarn,
          "authentication is off: anyone who can connect reads every workload and may apply "
          "mutations; use --authentication=kubernetes wherever others share the network",
          {{"authentication", config_.authentication}});
      return;
    }
    access::TokenReviewer::Options token_options;
    token_options.audiences = config_.token_audiences;
    token_options.valid_ttl = config_.authentication_cache_ttl;
    tokens_ = std::make_unique<access::TokenReviewer>(live_.front()->client(), token_options);
    for (const std::string& line : config_.unix_peer_identities) {
      absl::Status added = unix_peer_table_.Add(line);  // checked with the flags: cannot fail
      if (!added.ok()) Log(LogLevel::kError, "--unix-peer-identity", {{"error", added.ToString()}});
    }
    authenticator_ = std::make_unique<access::Authenticator>(access::Authenticator::Options{
        .client_certificates = !config_.tls.client_ca_file.empty(),
        .tokens = tokens_.get(),
        .unix_peers = unix_peer_table_.empty() ? nullptr : &unix_peer_table_});
    options.authenticator = authenticator_.get();
    options.unix_peers = &unix_peers_;
    access::AccessReviewer::Options access_options;
    access_options.allowed_ttl = config_.authorization_allowed_ttl;
    access_options.denied_ttl = config_.authorization_denied_ttl;
    for (const auto& cluster : live_) {
      access_reviewers_.push_back(
          std::make_unique<access::AccessReviewer>(cluster->client(), access_options));
      options.access_reviewers[cluster->name()] = access_reviewers_.back().get();
    }
    // A watch asks again as often as the shorter TTL lets an answer change.
    options.watch_access_recheck = std::min(access_options.allowed_ttl, access_options.denied_ttl);
    if (!config_.inline_permission.empty()) {
      // "VERB RESOURCE[.GROUP]", checked by the flag's parser.
      std::vector<std::string> words = absl::StrSplit(config_.inline_permission, ' ');
      std::vector<std::string> resource = absl::StrSplit(words[1], absl::MaxSplits('.', 1));
      options.inline_permission =
          access::ResourceAttributes{.verb = words[0],
                                     .group = resource.size() > 1 ? resource[1] : "",
                                     .resource = resource[0]};
    }
    options.audit = [this](const rpc::AuditEvent& event) { OnAudit(event); };
    Log(LogLevel::kInfo, "callers are authenticated and authorized",
        {{"authentication", "kubernetes"},
         {"token_reviews_by", live_.front()->name()},
         {"audiences", absl::StrJoin(config_.token_audiences, ",")},
         {"client_certificates", config_.tls.client_ca_file.empty() ? "no" : "yes"},
         {"unix_peer_identities", std::to_string(config_.unix_peer_identities.size())}});
  }

  // Counts every access decision, and logs each denial and each apply: who,
  // what, the decision and how long it took.
  void OnAudit(const rpc::AuditEvent& event) {
    using Kind = rpc::AuditEvent::Kind;
    // Most calls: a decision allowed from the cache, counted without a lookup.
    if (event.status.ok() && event.kind != Kind::kApply) {
      (event.kind == Kind::kAuthentication ? authenticated_ : authorized_)[event.cached ? 1 : 0]
          ->Increment();
      return;
    }
    const char* source = event.cached ? "cache" : "apiserver";
    std::string code = CodeName(static_cast<grpc::StatusCode>(event.status.code()));
    if (event.kind == Kind::kAuthentication)
      authentications_->WithLabels({code, source}).Increment();
    if (event.kind == Kind::kAuthorization) authorizations_->WithLabels({code, source}).Increment();
    LogFields fields = {{"method", event.method}};
    if (event.who != nullptr) {
      fields.push_back({"user", event.who->user});
      fields.push_back({"groups", absl::StrJoin(event.who->groups, ",")});
    }
    if (event.what != nullptr) fields.push_back({"action", event.what->Describe()});
    static constexpr const char* kStages[] = {"authentication", "authorization", "apply"};
    fields.push_back({"stage", kStages[static_cast<int>(event.kind)]});
    fields.push_back({"decision", event.status.ok() ? "allowed"
                                  : absl::IsPermissionDenied(event.status) ||
                                          absl::IsUnauthenticated(event.status)
                                      ? "denied"
                                      : "error"});
    fields.push_back({"code", code});
    if (!event.status.ok()) fields.push_back({"reason", std::string(event.status.message())});
    fields.push_back({"latency_ms", absl::StrCat(absl::ToDoubleMilliseconds(event.latency))});
    Log(LogLevel::kInfo, "audit", fields);
  }

  absl::Status StartServer() {
    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    // gRPC serves grpc.health.v1 without registering its descriptor; this
    // reference links ours in, so reflection (grpcurl) can describe it.
    (void)grpc::health::v1::HealthCheckRequest::descriptor();
    rpc::WorkloadMapService::Options options;
    options.max_page_size = config_.max_page_size;
    options.max_message_bytes = config_.max_message_bytes;
    options.watch_queue_size = config_.watch_queue_size;
    options.default_deadline = config_.default_deadline;
    options.max_inline_objects = config_.max_inline_objects;
    if (config_.caller_rate > 0 || config_.caller_max_watches > 0) {
      caller_limits_ = std::make_unique<access::CallerLimits>(access::CallerLimits::Options{
          .calls_per_second = static_cast<double>(config_.caller_rate),
          .burst = static_cast<double>(config_.caller_burst > 0 ? config_.caller_burst
                                                                : 2 * config_.caller_rate),
          .max_streams = config_.caller_max_watches,
          .exempt = {config_.caller_limit_exempt.begin(), config_.caller_limit_exempt.end()}});
      options.limits = caller_limits_.get();
    }
    StartAccessControl(options);
    service_ = std::make_unique<rpc::WorkloadMapService>(
        *index_, *engine_, options,
        [this](const char* method, grpc::StatusCode code, absl::Duration latency) {
          requests_->WithLabels({method, CodeName(code)}).Increment();
          latency_->WithLabels({method}).Observe(absl::ToDoubleSeconds(latency));
        });
    grpc::ServerBuilder builder;
    std::vector<int> ports(config_.listen.size());
    std::vector<std::string> socket_paths;
    // With authentication, Unix sockets are accepted by the daemon itself,
    // so that calls over them know their peer process (UnixListener).
    std::vector<std::string> peer_socket_paths;
    const bool know_unix_peers = options.authenticator != nullptr;
    auto tls = Credentials(config_);
    for (size_t i = 0; i < config_.listen.size(); ++i) {
      const std::string& address = config_.listen[i];
      // A Unix socket is local: file permissions guard it, not TLS.
      bool unix_socket = address.rfind("unix:", 0) == 0;
      if (unix_socket) {
        std::string path = address.substr(5);
        if (path.rfind("//", 0) == 0) path = path.substr(2);
        if (know_unix_peers) {
          peer_socket_paths.push_back(path);
          continue;
        }
        ::unlink(path.c_str());  // a stale socket of an earlier run
        socket_paths.push_back(path);
      }
      builder.AddListeningPort(address, unix_socket ? grpc::InsecureServerCredentials() : tls,
                               &ports[i]);
    }
    if (config_.web && !config_.metrics_address.empty()) {
      // The HTTP API's way in: an abstract Unix socket of a random name, off
      // the network, with no credentials of its own (calls carry the HTTP
      // caller's token, and only that authenticates them). Not gRPC's
      // in-process channel: with Debian's gRPC 1.51, streaming calls over it
      // that are cancelled at shutdown double-free a completion queue
      // (seen under ASan in web_test).
      absl::BitGen random;
      api_address_ = absl::StrCat("unix-abstract:workloadmapd-api-", getpid(), "-",
                                  absl::Hex(absl::Uniform<uint64_t>(random), absl::kZeroPad16));
      builder.AddListeningPort(api_address_, grpc::InsecureServerCredentials());
    }
    builder.SetMaxReceiveMessageSize(config_.max_message_bytes);
    builder.SetMaxSendMessageSize(config_.max_message_bytes);
    // Accept clients' keepalive pings (Go and Python clients often ping
    // every 10-30 s, even between calls) instead of answering them with
    // GOAWAY too_many_pings; ping idle clients to find dead watch streams.
    builder.AddChannelArgument(
        GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
        static_cast<int>(absl::ToInt64Milliseconds(config_.keepalive_min_ping_interval)));
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 120000);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    if (!server_) {
      return absl::UnavailableError(
          absl::StrCat("cannot listen on ", absl::StrJoin(config_.listen, ", ")));
    }
    // gRPC creates sockets under the umask (usually owner-only write); the
    // configured mode applies from here on.
    for (const std::string& path : socket_paths) {
      if (::chmod(path.c_str(), static_cast<mode_t>(config_.unix_socket_mode)) != 0) {
        return absl::UnavailableError(
            absl::StrCat("cannot set the mode of ", path, ": ", std::strerror(errno)));
      }
    }
    for (const std::string& path : peer_socket_paths) {
      absl::StatusOr<std::unique_ptr<rpc::UnixListener>> listener =
          rpc::UnixListener::Listen(path, static_cast<mode_t>(config_.unix_socket_mode));
      if (!listener.ok()) return listener.status();
      unix_listeners_.push_back(*std::move(listener));
      unix_listeners_.back()->Serve(*server_, unix_peers_);
    }
    for (size_t i = 0; i < config_.listen.size(); ++i) {
      if (config_.listen[i].rfind("unix:", 0) != 0 && ports[i] == 0) {
        return absl::UnavailableError("cannot listen on " + config_.listen[i]);
      }
      Log(LogLevel::kInfo, "listening",
          {{"address", config_.listen[i]},
           {"port", std::to_string(ports[i])},
           {"tls", config_.tls.cert_file.empty() ? "off" : "on"}});
    }
    SetServing(false);
    return absl::OkStatus();
  }

  void SetServing(bool serving) {
    auto* health = server_->GetHealthCheckService();
    health->SetServingStatus(serving);
    health->SetServingStatus(kServiceName, serving);
    service_->SetReady(serving);
    ready_ = serving;
  }

  // "NOT_FOUND" for 5: gRPC's status codes are Abseil's, number for number.
  // Abseil names only 0 to 16; any other code is shown as its number.
  static std::string CodeName(grpc::StatusCode code) {
    std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
    return name.empty() ? std::to_string(static_cast<int>(code)) : name;
  }

  void AddMetrics() {
    requests_ =
        metrics_.AddCounter("workloadmap_rpc_requests_total",
                            "Finished unary RPCs by method and status code.", {"method", "code"});
    latency_ = metrics_.AddHistogram("workloadmap_rpc_duration_seconds",
                                     "Unary RPC latency by method, in seconds.", {"method"},
                                     observability::LatencyBuckets());
    auto per_kind = [this](auto value) {
      return [this, value]() {
        std::vector<observability::Sample> samples;
        for (const auto& cluster : live_) {
          for (const kube::KindStatus& s : cluster->Status()) {
            samples.push_back({{cluster->name(), s.gvk.ToString()}, value(s)});
          }
        }
        return samples;
      };
    };
    metrics_.AddGaugeCallback(
        "workloadmap_cache_objects", "Objects in the watch cache by cluster and kind.",
        {"cluster", "kind"},
        per_kind([](const kube::KindStatus& s) { return static_cast<double>(s.objects); }));
    metrics_.AddGaugeCallback(
        "workloadmap_cache_synced", "1 when the kind's initial list is in the cache.",
        {"cluster", "kind"},
        per_kind([](const kube::KindStatus& s) { return s.health.has_synced ? 1.0 : 0.0; }));
    metrics_.AddCounterCallback(
        "workloadmap_cache_lists_total", "Complete lists and relists by cluster and kind.",
        {"cluster", "kind"},
        per_kind([](const kube::KindStatus& s) { return static_cast<double>(s.health.lists); }));
    metrics_.AddCounterCallback("workloadmap_cache_relists_expired_total",
                                "Relists because the resourceVersion expired (410 Gone).",
                                {"cluster", "kind"}, per_kind([](const kube::KindStatus& s) {
                                  return static_cast<double>(s.health.relists_410);
                                }));
    metrics_.AddCounterCallback("workloadmap_cache_watch_restarts_total",
                                "Watches reopened after the first.", {"cluster", "kind"},
                                per_kind([](const kube::KindStatus& s) {
                                  return static_cast<double>(s.health.watch_restarts);
                                }));
    metrics_.AddGaugeCallback("workloadmap_definition_errors",
                              "Definitions rejected (catalog, files and cluster Kartas).",
                              {"cluster"}, [this] {
                                std::vector<observability::Sample> samples;
                                for (index::Cluster* c : index_->clusters()) {
                                  auto registry = c->definitions();
                                  double n = c->rejected_definitions().size() +
                                             (registry ? registry->rejected().size() : 0);
                                  samples.push_back({{c->name()}, n});
                                }
                                return samples;
                              });
    metrics_.AddGaugeCallback("workloadmap_workloads", "Resolved workloads held by the index.", {},
                              [this] {
                                return std::vector<observability::Sample>{
                                    {{}, static_cast<double>(index_->List().size())}};
                              });
    metrics_.AddCounterCallback(
        "workloadmap_resolutions_total", "Workload resolutions by the index.", {"result"}, [this] {
          auto c = index_->counters();
          return std::vector<observability::Sample>{
              {{"ok"}, static_cast<double>(c.resolutions - c.resolution_errors)},
              {{"error"}, static_cast<double>(c.resolution_errors)}};
        });
    authentications_ = metrics_.AddCounter(
        "workloadmap_authentications_total",
        "Callers authenticated (code OK) or refused, decided from a cache or by the apiserver.",
        {"code", "source"});
    authorizations_ = metrics_.AddCounter(
        "workloadmap_authorizations_total",
        "Calls authorized (code OK) or denied, decided from a cache or by the apiserver.",
        {"code", "source"});
    for (int cached : {0, 1}) {
      const char* source = cached ? "cache" : "apiserver";
      authenticated_[cached] = &authentications_->WithLabels({"OK", source});
      authorized_[cached] = &authorizations_->WithLabels({"OK", source});
    }
    metrics_.AddCounterCallback(
        "workloadmap_access_cache_lookups_total",
        "Lookups in the caches of token reviews (cache=token) and access reviews (cache=access).",
        {"cache", "result"}, [this] {
          std::vector<observability::Sample> samples;
          if (tokens_ == nullptr) return samples;
          auto token = tokens_->cache_stats();
          uint64_t access_hits = 0, access_misses = 0;
          for (const auto& reviewer : access_reviewers_) {
            auto stats = reviewer->cache_stats();
            access_hits += stats.hits;
            access_misses += stats.misses;
          }
          samples.push_back({{"token", "hit"}, static_cast<double>(token.hits)});
          samples.push_back({{"token", "miss"}, static_cast<double>(token.misses)});
          samples.push_back({{"access", "hit"}, static_cast<double>(access_hits)});
          samples.push_back({{"access", "miss"}, static_cast<double>(access_misses)});
          return samples;
        });
    metrics_.AddCounterCallback(
        "workloadmap_caller_limit_refusals_total",
        "Calls and watches refused because their caller was over --caller-rate or "
        "--caller-max-watches.",
        {}, [this] {
          return std::vector<observability::Sample>{
              {{}, caller_limits_ ? static_cast<double>(caller_limits_->refused()) : 0.0}};
        });
    if (elector_) {
      metrics_.AddGaugeCallback(
          "workloadmap_leader",
          "1 while this replica holds the leader Lease (--leader-elect) and may write, else 0.",
          {"lease", "identity"}, [this] {
            return std::vector<observability::Sample>{
                {{lease_, elector_->identity()}, elector_->IsLeader() ? 1.0 : 0.0}};
          });
      metrics_.AddCounterCallback(
          "workloadmap_leader_acquisitions_total", "Times this replica started leading.",
          {"lease", "identity"}, [this] {
            return std::vector<observability::Sample>{
                {{lease_, elector_->identity()}, static_cast<double>(elector_->times_led())}};
          });
    }
    if (!karta_controllers_.empty()) {
      metrics_.AddCounterCallback(
          "workloadmap_karta_operator_writes_total",
          "Writes of the Karta operator (on the leader): write=labels, status or event.",
          {"cluster", "write"}, [this] {
            std::vector<observability::Sample> samples;
            for (size_t i = 0; i < karta_controllers_.size(); ++i) {
              auto counts = karta_controllers_[i]->counts();
              const std::string& cluster = live_[i]->name();
              samples.push_back({{cluster, "labels"}, static_cast<double>(counts.label_writes)});
              samples.push_back({{cluster, "status"}, static_cast<double>(counts.status_writes)});
              samples.push_back({{cluster, "event"}, static_cast<double>(counts.events)});
            }
            return samples;
          });
      metrics_.AddCounterCallback(
          "workloadmap_karta_operator_failures_total",
          "Karta reconciles that failed (retried with backoff; the log says why).", {"cluster"},
          [this] {
            std::vector<observability::Sample> samples;
            for (size_t i = 0; i < karta_controllers_.size(); ++i) {
              samples.push_back({{live_[i]->name()},
                                 static_cast<double>(karta_controllers_[i]->counts().failures)});
            }
            return samples;
          });
    }
    if (!pod_group_controllers_.empty()) {
      metrics_.AddCounterCallback(
          "workloadmap_pod_group_writes_total",
          "Writes of the PodGroup role (on the leader): write=create or update (a PodGroup), "
          "pod (a pod put into its group).",
          {"cluster", "write"}, [this] {
            std::vector<observability::Sample> samples;
            for (size_t i = 0; i < pod_group_controllers_.size(); ++i) {
              auto counts = pod_group_controllers_[i]->counts();
              const std::string& cluster = live_[i]->name();
              samples.push_back({{cluster, "create"}, static_cast<double>(counts.creates)});
              samples.push_back({{cluster, "update"}, static_cast<double>(counts.updates)});
              samples.push_back({{cluster, "pod"}, static_cast<double>(counts.pod_patches)});
            }
            return samples;
          });
      metrics_.AddCounterCallback(
          "workloadmap_pod_group_failures_total",
          "PodGroup reconciles that failed (retried with backoff; the log says why).", {"cluster"},
          [this] {
            std::vector<observability::Sample> samples;
            for (size_t i = 0; i < pod_group_controllers_.size(); ++i) {
              samples.push_back(
                  {{live_[i]->name()},
                   static_cast<double>(pod_group_controllers_[i]->counts().failures)});
            }
            return samples;
          });
    }
    metrics_.AddGaugeCallback("workloadmap_ready", "1 once the initial sync is resolved.", {},
                              [this] {
                                return std::vector<observability::Sample>{{{}, ready_ ? 1.0 : 0.0}};
                              });
    if (config_.workload_metrics_max_series > 0) {
      workload_metrics_ = std::make_unique<platform::WorkloadMetrics>(
          *index_, platform::WorkloadMetrics::Options{
                       .max_series = static_cast<size_t>(config_.workload_metrics_max_series)});
      metrics_.AddExporter(
          [this](observability::ExpositionWriter& writer) { workload_metrics_->Write(writer); });
    }
  }

  // `handler`, and with --authentication=kubernetes only for a caller with
  // a bearer token the apiserver accepts and RBAC's get on the request's
  // path as a non-resource URL (a ClusterRole's nonResourceURLs:
  // ["/metrics"]), as kube-rbac-proxy guards metrics; 401 or 403 otherwise.
  // The probes are never guarded: the kubelet sends no token.
  observability::HttpServer::Handler Guarded(observability::HttpServer::Handler handler) {
    if (authenticator_ == nullptr) return handler;
    return [this, handler = std::move(handler)](const observability::HttpServer::Request& request) {
      using Response = observability::HttpServer::Response;
      absl::Time start = absl::Now();
      access::CallerCredentials credentials;
      absl::StatusOr<access::SharedIdentity> identity =
          absl::UnauthenticatedError("no credentials: send \"Authorization: Bearer <token>\"");
      if (!request.authorization.empty()) {
        absl::StatusOr<std::string> token = access::ParseBearerToken(request.authorization);
        if (!token.ok()) {
          identity = absl::UnauthenticatedError(token.status().message());
        } else {
          credentials.bearer_token = *std::move(token);
          identity = authenticator_->Authenticate(credentials);
        }
      }
      OnAudit({.kind = rpc::AuditEvent::Kind::kAuthentication,
               .method = "HTTP",
               .who = identity.ok() ? identity->get() : nullptr,
               .status = identity.status(),
               .latency = absl::Now() - start});
      if (!identity.ok()) {
        int status = absl::IsUnavailable(identity.status()) ? 503 : 401;
        return Response{status, "text/plain; charset=utf-8",
                        std::string(identity.status().message()) + "\n"};
      }
      access::ResourceAttributes what{.verb = "get", .path = request.path};
      absl::Status decided = access_reviewers_.front()->Check(**identity, what);
      OnAudit({.kind = rpc::AuditEvent::Kind::kAuthorization,
               .method = "HTTP",
               .who = identity->get(),
               .what = &what,
               .status = decided,
               .latency = absl::Now() - start});
      if (!decided.ok()) {
        int status = absl::IsPermissionDenied(decided) ? 403 : 503;
        return Response{status, "text/plain; charset=utf-8", std::string(decided.message()) + "\n"};
      }
      return handler(request);
    };
  }

  // With --webhook-address: the validating admission webhook for Karta
  // objects, on its own HTTPS port (the apiserver calls it; the metrics
  // port may be plaintext and is for people).
  absl::Status StartWebhook() {
    if (config_.webhook_address.empty()) return absl::OkStatus();
    // A renewed certificate is served within 2 s of its files changing.
    auto tls = admission::TlsFiles::Load(config_.webhook_tls_cert, config_.webhook_tls_key,
                                         absl::Seconds(2));
    if (!tls.ok()) return tls.status();
    webhook_tls_ = *std::move(tls);
    webhook_ =
        std::make_unique<admission::HttpsServer>(*webhook_tls_, admission::HttpsServer::Options{});
    webhook_->Handle("/validate-karta", [this](const admission::HttpsServer::Request& request) {
      using Response = admission::HttpsServer::Response;
      if (request.method != "POST") return Response{405, "text/plain", "POST an AdmissionReview\n"};
      absl::StatusOr<admission::KartaReview> review =
          admission::ReviewKarta(request.body, *engine_);
      if (!review.ok()) {
        ++webhook_reviews_[2];
        return Response{400, "text/plain", absl::StrCat(review.status().message(), "\n")};
      }
      bool denied = review->verdict == admission::Verdict::kDenied;
      ++webhook_reviews_[denied ? 1 : 0];
      if (denied) {
        Log(LogLevel::kInfo, "karta refused by the webhook",
            {{"message", FindString(review->review, {"response", "status", "message"})}});
      }
      return Response{200, "application/json", review->review.dump()};
    });
    // With the PodGroup role: pods join their group as they are created,
    // before a scheduler sees them (docs/operations.md, "PodGroups for gang
    // schedulers"). The first cluster's: the apiserver that calls is its.
    if (!pod_group_controllers_.empty()) {
      controllers::PodGroupController* groups = pod_group_controllers_.front().get();
      webhook_->Handle(
          "/mutate-pod", [this, groups](const admission::HttpsServer::Request& request) {
            using Response = admission::HttpsServer::Response;
            if (request.method != "POST") {
              return Response{405, "text/plain", "POST an AdmissionReview\n"};
            }
            absl::StatusOr<admission::PodReview> review = admission::ReviewPod(
                request.body, [groups](const Json& pod, const std::string& namespace_) {
                  return groups->MembershipOfNewPod(pod, namespace_);
                });
            if (!review.ok()) {
              ++pod_reviews_[2];
              return Response{400, "text/plain", absl::StrCat(review.status().message(), "\n")};
            }
            ++pod_reviews_[review->placed ? 0 : 1];
            return Response{200, "application/json", review->review.dump()};
          });
      metrics_.AddCounterCallback(
          "workloadmap_admission_pod_reviews_total",
          "Pods the mutating webhook answered for: result=placed (put into their PodGroup), "
          "admitted (as they were: no group known yet, or none), invalid (HTTP 400).",
          {"result"}, [this] {
            return std::vector<observability::Sample>{
                {{"placed"}, static_cast<double>(pod_reviews_[0].load())},
                {{"admitted"}, static_cast<double>(pod_reviews_[1].load())},
                {{"invalid"}, static_cast<double>(pod_reviews_[2].load())}};
          });
    }
    if (absl::Status s = webhook_->Start(config_.webhook_address); !s.ok()) return s;
    metrics_.AddCounterCallback(
        "workloadmap_admission_reviews_total",
        "Karta admission reviews answered by the webhook: verdict=allowed, denied, or invalid "
        "(not an AdmissionReview: HTTP 400).",
        {"verdict"}, [this] {
          return std::vector<observability::Sample>{
              {{"allowed"}, static_cast<double>(webhook_reviews_[0].load())},
              {{"denied"}, static_cast<double>(webhook_reviews_[1].load())},
              {{"invalid"}, static_cast<double>(webhook_reviews_[2].load())}};
        });
    metrics_.AddCounterCallback(
        "workloadmap_admission_certificate_reloads_total",
        "Times the webhook's certificate and key were read again after their files changed.", {},
        [this] {
          return std::vector<observability::Sample>{
              {{}, static_cast<double>(webhook_tls_->reloads())}};
        });
    Log(LogLevel::kInfo, "serving the Karta admission webhook",
        {{"address", config_.webhook_address}, {"port", absl::StrCat(webhook_->port())}});
    return absl::OkStatus();
  }

  // The HTTP endpoint: metrics, probes, /debug, and the JSON API and web
  // page (docs/http-api.md).
  absl::Status StartHttp() {
    if (config_.metrics_address.empty()) return absl::OkStatus();
    observability::HttpServerOptions http_options;
    // API calls hold a handler thread while the service answers (a token
    // or access review may take a round trip to the apiserver).
    http_options.handler_threads = config_.web ? 4 : 2;
    http_ = std::make_unique<observability::HttpServer>(http_options);
    // Sent as it is rendered: a scrape of 100,000 pods is some 50 MB of
    // text that then never exists whole. The handler thread renders and
    // waits for the scraper to read each chunk (at most 10 s per chunk).
    http_->Handle(
        "/metrics", Guarded([this](const observability::HttpServer::Request&) {
          observability::HttpServer::Response response{
              200, "text/plain; version=0.0.4; charset=utf-8", ""};
          response.stream = [this](std::shared_ptr<observability::ResponseStream> stream) {
            metrics_.RenderTo([&stream](absl::string_view chunk) {
              return stream->WriteWait(chunk, absl::Seconds(10));
            });
            stream->Finish();
          };
          return response;
        }));
    // The probes run on the server's I/O thread, so a slow /metrics or
    // /debug/cache, or clients holding every connection, cannot fail them.
    http_->HandleProbe("/healthz", [](const observability::HttpServer::Request&) {
      return observability::HttpServer::Response{200, "text/plain; charset=utf-8", "ok\n"};
    });
    http_->HandleProbe("/readyz", [this](const observability::HttpServer::Request&) {
      return ready_
                 ? observability::HttpServer::Response{200, "text/plain; charset=utf-8", "ready\n"}
                 : observability::HttpServer::Response{503, "text/plain; charset=utf-8",
                                                       "syncing\n"};
    });
    // What every informer is doing, for operators (and for debugging a
    // kind that does not sync): state, last error, counters.
    http_->Handle(
        "/debug/cache", Guarded([this](const observability::HttpServer::Request&) {
          Json out = Json::object();
          for (const auto& cluster : live_) {
            for (const kube::KindStatus& s : cluster->Status()) {
              out[cluster->name()][s.gvk.ToString()] = {
                  {"served", s.served},
                  {"resource", s.resource},
                  {"state", kube::StateName(s.health.state)},
                  {"synced", s.health.has_synced},
                  {"objects", s.objects},
                  {"message", s.message},
                  {"lists", s.health.lists},
                  {"watch_restarts", s.health.watch_restarts},
                  {"events", s.health.events},
                  {"resource_version", s.health.resource_version}};
            }
          }
          return observability::HttpServer::Response{200, "application/json", out.dump(2) + "\n"};
        }));
    // Who leads, as this replica sees it (--leader-elect).
    http_->Handle(
        "/debug/leader", Guarded([this](const observability::HttpServer::Request&) {
          Json out = {{"enabled", elector_ != nullptr}};
          if (elector_) {
            out["lease"] = lease_;
            out["identity"] = elector_->identity();
            out["leading"] = elector_->IsLeader();
            out["leader"] = elector_->leader();
            out["acquisitions"] = elector_->times_led();
          }
          return observability::HttpServer::Response{200, "application/json", out.dump(2) + "\n"};
        }));
    if (config_.web) {
      // The API calls the service over the daemon's own socket, with each
      // caller's own credentials: access control, limits and audit are the
      // service's.
      grpc::ChannelArguments arguments;
      arguments.SetMaxReceiveMessageSize(config_.max_message_bytes);
      http_api_ = std::make_unique<web::HttpApi>(
          grpc::CreateCustomChannel(api_address_, grpc::InsecureChannelCredentials(), arguments),
          web::HttpApi::Options());
      http_api_->Register(*http_);
      web::RegisterWebAssets(*http_, config_.web_assets_dir);
      if (!config_.web_assets_dir.empty()) {
        Log(LogLevel::kWarn, "serving the web page from a directory, not the binary",
            {{"directory", config_.web_assets_dir}});
      }
    }
    if (absl::Status s = http_->Start(config_.metrics_address); !s.ok()) return s;
    Log(LogLevel::kInfo, "metrics",
        {{"address", config_.metrics_address}, {"port", std::to_string(http_->port())}});
    return absl::OkStatus();
  }

  // SERVING once every cluster's initial lists are in and resolved. The
  // log line says how long after the process started (a snapshot's load
  // included), and how long the lists and resolution took after listening.
  void AwaitReadiness() {
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

  // SIGTERM or SIGINT: NOT_SERVING, stop accepting, let calls finish for
  // the grace period, cancel streams.
  void AwaitSignal() {
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

  const Config config_;
  const absl::Time started_;  // when the process began, for the ready line
  std::unique_ptr<expressions::Engine> engine_;
  std::unique_ptr<index::WorkloadIndex> index_;
  std::vector<std::unique_ptr<index::LiveCluster>> live_;
  // After live_, whose first client it uses: stopped before it goes.
  std::string identity_;  // Identity()
  std::unique_ptr<kube::LeaderElector> elector_;
  std::vector<std::unique_ptr<controllers::KartaController>> karta_controllers_;
  std::vector<std::unique_ptr<controllers::PodGroupController>> pod_group_controllers_;
  std::vector<std::unique_ptr<controllers::CatalogPublication>> publications_;
  std::string lease_;  // "namespace/name" of elector_'s Lease
  std::unique_ptr<index::SnapshotCluster> snapshot_;
  std::unique_ptr<access::TokenReviewer> tokens_;
  access::UnixPeerTable unix_peer_table_;
  rpc::UnixPeerRegistry unix_peers_;
  std::unique_ptr<access::Authenticator> authenticator_;
  std::vector<std::unique_ptr<access::AccessReviewer>> access_reviewers_;
  std::unique_ptr<access::CallerLimits> caller_limits_;
  std::unique_ptr<rpc::WorkloadMapService> service_;
  std::unique_ptr<grpc::Server> server_;
  // After server_: stopped (their threads joined) before it goes.
  std::vector<std::unique_ptr<rpc::UnixListener>> unix_listeners_;
  observability::Registry metrics_;
  observability::CounterFamily* requests_ = nullptr;
  observability::HistogramFamily* latency_ = nullptr;
  observability::CounterFamily* authentications_ = nullptr;
  observability::CounterFamily* authorizations_ = nullptr;
  // Their OK series, [0] from the apiserver and [1] from a cache.
  observability::Counter* authenticated_[2] = {};
  observability::Counter* authorized_[2] = {};
  std::unique_ptr<platform::WorkloadMetrics> workload_metrics_;
  // The listener the HTTP API calls the service through (StartServer).
  std::string api_address_;
  // Before http_: its handlers call it until http_ has stopped.
  std::unique_ptr<web::HttpApi> http_api_;
  std::unique_ptr<observability::HttpServer> http_;
  std::unique_ptr<admission::TlsFiles> webhook_tls_;
  std::unique_ptr<admission::HttpsServer> webhook_;
  std::atomic<int64_t> webhook_reviews_[3] = {0, 0, 0};  // allowed, denied, invalid
  std::atomic<int64_t> pod_reviews_[3] = {0, 0, 0};      // placed, admitted, invalid
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace
}  // namespace wm::daemon

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
