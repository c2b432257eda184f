// A Daemon's gRPC server, access control and audit.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "server/common/status_code_name.h"
#include "server/daemon/daemon.h"
#include "server/daemon/grpc_tls.h"
#include "server/daemon/log.h"

namespace wm::daemon {
namespace {

constexpr char kServiceName[] = "workloadmap.v1.WorkloadMap";

// The flow-control window gRPC grants each request stream, fixed: see
// where it is set. 256 KiB per round trip is 250 MB/s of upload at 1 ms of
// latency, 25 MB/s at 10 ms.
constexpr int kRequestWindowBytes = 256 << 10;

}  // namespace

void Daemon::StartAccessControl(rpc::WorkloadMapService::Options& options) {
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
    options.inline_permission = access::ResourceAttributes{
        .verb = words[0], .group = resource.size() > 1 ? resource[1] : "", .resource = resource[0]};
  }
  options.audit = [this](const rpc::AuditEvent& event) { OnAudit(event); };
  Log(LogLevel::kInfo, "callers are authenticated and authorized",
      {{"authentication", "kubernetes"},
       {"token_reviews_by", live_.front()->name()},
       {"audiences", absl::StrJoin(config_.token_audiences, ",")},
       {"client_certificates", config_.tls.client_ca_file.empty() ? "no" : "yes"},
       {"unix_peer_identities", std::to_string(config_.unix_peer_identities.size())}});
}

void Daemon::OnAudit(const rpc::AuditEvent& event) {
  using Kind = rpc::AuditEvent::Kind;
  // Most calls: a decision allowed from the cache, counted without a lookup.
  if (event.status.ok() && event.kind != Kind::kApply) {
    (event.kind == Kind::kAuthentication ? authenticated_ : authorized_)[event.cached ? 1 : 0]
        ->Increment();
    return;
  }
  const char* source = event.cached ? "cache" : "apiserver";
  std::string code = StatusCodeName(event.status.code());
  if (event.kind == Kind::kAuthentication) authentications_->WithLabels({code, source}).Increment();
  if (event.kind == Kind::kAuthorization) authorizations_->WithLabels({code, source}).Increment();
  LogFields fields = {{"method", event.method}};
  if (event.who != nullptr) {
    fields.push_back({"user", event.who->user});
    fields.push_back({"groups", absl::StrJoin(event.who->groups, ",")});
  }
  if (event.what != nullptr) fields.push_back({"action", event.what->Describe()});
  static constexpr const char* kStages[] = {"authentication", "authorization", "apply"};
  fields.push_back({"stage", kStages[static_cast<int>(event.kind)]});
  fields.push_back(
      {"decision", event.status.ok() ? "allowed"
                   : absl::IsPermissionDenied(event.status) || absl::IsUnauthenticated(event.status)
                       ? "denied"
                       : "error"});
  fields.push_back({"code", code});
  if (!event.status.ok()) fields.push_back({"reason", std::string(event.status.message())});
  fields.push_back({"latency_ms", absl::StrCat(absl::ToDoubleMilliseconds(event.latency))});
  Log(LogLevel::kInfo, "audit", fields);
}

absl::Status Daemon::StartServer() {
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
  // The native engine evaluates on the calling thread; libjq waits for a
  // worker process, which no gRPC thread should.
  if (config_.jq_engine == "native") options.small_inline_bytes = 32 << 10;
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
        rpc_metrics_->Observe(method, static_cast<absl::StatusCode>(code), latency);
      });
  grpc::ServerBuilder builder;
  std::vector<int> ports(config_.listen.size());
  std::vector<std::string> socket_paths;
  // With authentication, Unix sockets are accepted by the daemon itself,
  // so that calls over them know their peer process (UnixListener).
  std::vector<std::string> peer_socket_paths;
  const bool know_unix_peers = options.authenticator != nullptr;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> tls = GrpcServerCredentials(config_.tls);
  if (!tls.ok()) return tls.status();
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
    builder.AddListeningPort(address, unix_socket ? grpc::InsecureServerCredentials() : *tls,
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
  // gRPC 1.51 holds a message whole before it checks its size: the quota
  // bounds what it may hold (Config::grpc_memory_limit_bytes).
  grpc::ResourceQuota quota("workloadmapd");
  quota.Resize(static_cast<size_t>(config_.grpc_memory_limit_bytes));
  builder.SetResourceQuota(quota);
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
  // A fixed window for what clients send, not one grown by BDP probes.
  // gRPC 1.51 sizes a connection's next read buffer from the bytes its
  // last read round brought in, without bound, and keeps the part a read
  // did not fill for as long as the connection lives. Probing grows the
  // window of a client sending a 17 MiB request to megabytes, so its read
  // rounds do too: every connection that had carried two such requests
  // kept 14-36 MB allocated between calls (docs/benchmarks.md, hostile
  // soak). With the window fixed a read round brings in about a window,
  // and a connection keeps about that.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, kRequestWindowBytes);
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

void Daemon::SetServing(bool serving) {
  auto* health = server_->GetHealthCheckService();
  health->SetServingStatus(serving);
  health->SetServingStatus(kServiceName, serving);
  service_->SetReady(serving);
  ready_ = serving;
}

}  // namespace wm::daemon
