#include "client/wmctl/cluster_session.h"

#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "grpcpp/server_builder.h"
#include "server/expressions/native_engine.h"

namespace wm::wmctl {
namespace {

using State = kube::ReflectorHealth::State;

std::string KindName(const kube::KindStatus& s) {
  return s.resource.empty() ? s.gvk.ToString() : s.resource;
}

// Listed, or known to be unlistable. A wanted kind that the cache has not
// reconciled yet (a kind a Karta just added) has neither an informer nor a
// reason for having none: it is not settled.
bool Settled(const kube::KindStatus& s) {
  if (!s.served) return !s.message.empty();
  return s.health.has_synced || s.health.state == State::kForbidden ||
         s.health.state == State::kNotFound;
}

bool AllSettled(const std::vector<kube::KindStatus>& statuses) {
  for (const kube::KindStatus& s : statuses) {
    if (!Settled(s)) return false;
  }
  return true;
}

// "pods (1200 so far), jobs.batch (failing: ...)": the kinds not yet listed.
std::string Pending(const std::vector<kube::KindStatus>& statuses, bool errors) {
  std::vector<std::string> pending;
  for (const kube::KindStatus& s : statuses) {
    if (Settled(s)) continue;
    std::string item = KindName(s);
    if (s.objects > 0) absl::StrAppend(&item, " (", s.objects, " so far)");
    if (errors && !s.health.message.empty()) absl::StrAppend(&item, ": ", s.health.message);
    pending.push_back(std::move(item));
  }
  return absl::StrJoin(pending, errors ? "; " : ", ");
}

}  // namespace

absl::StatusOr<kube::ClusterConnection> LoadClusterConnection(const KubeconfigSettings& settings) {
  kube::KubeconfigOptions options;
  if (!settings.kubeconfig.empty()) options.paths = {settings.kubeconfig};
  options.context = settings.context;
  options.getenv = settings.getenv;
  if (options.context.empty()) {
    auto current = kube::KubeconfigCurrentContext(options);
    if (!current.ok()) return current.status();
    if (current->empty()) {
      return absl::FailedPreconditionError(
          "the kubeconfig has no current-context: pass --context, or --address for a daemon");
    }
    options.context = *current;
  }
  auto connection = kube::LoadKubeconfig(options);
  if (!connection.ok()) return connection.status();
  // The service's one cluster is named after it, as the daemon's are.
  connection->context = options.context;
  if (!settings.as.empty()) {
    connection->impersonate.user = settings.as;
    connection->impersonate.uid.clear();
    connection->impersonate.extra.clear();
  }
  if (!settings.as_groups.empty()) connection->impersonate.groups = settings.as_groups;
  return connection;
}

absl::StatusOr<std::unique_ptr<ClusterSession>> ClusterSession::Start(
    kube::ClusterConnection connection, Options options, std::ostream& progress) {
  absl::Time start = absl::Now();
  auto session = std::unique_ptr<ClusterSession>(new ClusterSession());
  session->context_ = connection.context;
  // The daemon's default engine: in-process, cheap to compile with.
  auto engine = expressions::NewNativeEngine();
  if (!engine.ok()) return engine.status();
  session->engine_ = *std::move(engine);
  session->index_ =
      std::make_unique<index::WorkloadIndex>(*session->engine_, index::WorkloadIndex::Options{});
  index::LiveCluster::Options cluster_options;
  cluster_options.cache.namespace_ = options.namespace_;
  session->cluster_ = std::make_unique<index::LiveCluster>(
      session->context_, std::move(connection), *session->engine_, options.base, cluster_options);
  session->index_->AddCluster(session->cluster_.get());
  session->index_->Start();
  if (absl::Status s = session->cluster_->Start(*session->index_); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("context ", session->context_, ": ", s.message()));
  }
  session->service_ = std::make_unique<rpc::WorkloadMapService>(*session->index_, *session->engine_,
                                                                rpc::WorkloadMapService::Options{});
  grpc::ServerBuilder builder;
  builder.RegisterService(session->service_.get());
  session->server_ = builder.BuildAndStart();
  if (!session->server_) return absl::InternalError("the in-process gRPC server did not start");
  session->channel_ = session->server_->InProcessChannel(grpc::ChannelArguments());
  if (absl::Status s = session->AwaitInitialLists(options, start, progress); !s.ok()) return s;
  session->service_->SetReady(true);
  return session;
}

absl::Status ClusterSession::AwaitInitialLists(const Options& options, absl::Time start,
                                               std::ostream& progress) {
  absl::Time next_progress = start + options.progress_after;
  std::string where = options.namespace_.empty() ? "every namespace"
                                                 : absl::StrCat("namespace ", options.namespace_);
  while (true) {
    std::vector<kube::KindStatus> statuses = cluster_->Status();
    absl::Time now = absl::Now();
    // The deadline first: a timeout is kept even by lists that finish on it.
    if (options.timeout > absl::ZeroDuration() && now - start >= options.timeout) {
      std::string pending = Pending(statuses, true);
      return absl::DeadlineExceededError(
          absl::StrCat("context ", context_, ": not everything was listed within ",
                       absl::FormatDuration(options.timeout), " (--request-timeout)",
                       pending.empty() ? "" : "; still waiting for ", pending));
    }
    if (AllSettled(statuses)) {
      // Their changes delivered and resolved; a Karta among them may have
      // asked for more kinds, so look again.
      cluster_->cache().WaitForIdle();
      index_->WaitForIdle();
      if (AllSettled(cluster_->Status())) return absl::OkStatus();
      continue;
    }
    if (now >= next_progress) {
      size_t listed = 0;
      for (const kube::KindStatus& s : statuses) listed += Settled(s);
      progress << "wmctl: listing from context " << context_ << " (" << where << "): " << listed
               << " of " << statuses.size() << " kinds listed, waiting for "
               << Pending(statuses, false) << "\n"
               << std::flush;
      next_progress = now + options.progress_every;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

std::vector<std::string> ClusterSession::Warnings() const {
  std::vector<std::string> out;
  std::vector<std::string> forbidden;
  std::string example;  // one apiserver message, for the user it names
  for (const kube::KindStatus& s : cluster_->Status()) {
    if (!s.served || s.health.state != State::kForbidden) continue;
    if (s.gvk == sources::KartaGvk()) {
      out.push_back(absl::StrCat("may not list the cluster's Karta definitions (", s.health.message,
                                 "): using the built-in catalog and --definitions only"));
      continue;
    }
    forbidden.push_back(KindName(s));
    if (example.empty()) example = s.health.message;
  }
  // One line for all: a narrow Role forbids most of the catalog's kinds.
  if (!forbidden.empty()) {
    out.push_back(absl::StrCat("may not list ", absl::StrJoin(forbidden, ", "),
                               ": their objects are left out (", example, ")"));
  }
  return out;
}

ClusterSession::~ClusterSession() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now());
  if (cluster_) cluster_->Stop();
  if (index_) index_->Stop();
}

}  // namespace wm::wmctl
