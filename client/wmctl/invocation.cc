// What Invocation's commands share: the connection to a daemon or a
// cluster, the engine and definitions, and printing.
#include "client/wmctl/invocation.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catalog/catalog.h"
#include "client/wmctl/config.h"
#include "client/wmctl/engine_factory.h"
#include "server/common/yaml_json.h"

namespace wm::wmctl {
namespace {

// Kubeconfig mode waits this long for its lists unless --request-timeout.
constexpr absl::Duration kKubeconfigTimeout = absl::Seconds(60);

}  // namespace

absl::StatusOr<expressions::Engine*> Invocation::Engine() {
  if (!engine_) {
    auto engine = MakeEngine(kDefaultEngine);
    if (!engine.ok()) return engine.status();
    engine_ = *std::move(engine);
  }
  return engine_.get();
}

absl::StatusOr<definitions::Registry*> Invocation::LoadRegistry() {
  auto engine = Engine();
  if (!engine.ok()) return engine.status();
  registry_ = std::make_unique<definitions::Registry>(**engine);
  if (!args_.Has("--no-catalog")) {
    absl::Status s = registry_->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
    if (!s.ok()) return s;
  }
  if (args_.Has("--definitions")) {
    for (const std::string& path : args_.flags.at("--definitions")) {
      absl::Status s = registry_->AddPath(path);
      if (!s.ok()) return s;
    }
  }
  return registry_.get();
}

std::vector<RejectedRow> Invocation::RegistryRejected() const {
  std::vector<RejectedRow> out;
  for (const auto& r : registry_->rejected()) {
    RejectedRow row{r.name, r.source, {}};
    for (const auto& f : r.findings) {
      if (f.is_error()) row.findings.push_back(f.ToString());
    }
    out.push_back(std::move(row));
  }
  return out;
}

void Invocation::Print(const Json& value) {
  if (settings_.output == "yaml") {
    out_ << ToYaml(value);
  } else {
    out_ << value.dump(2) << "\n";
  }
}

Json Invocation::WithMode(Json view) const {
  view["mode"] = ModeName(settings_.mode);
  return view;
}

int Invocation::Connect(bool all_namespaces) {
  if (settings_.mode == Mode::kKubeconfig) return ConnectToCluster(all_namespaces, false);
  if (std::string bad = ConnectionProblem(); !bad.empty()) return Fail(2, bad);
  auto client = LiveClient::Create(settings_.connection);
  if (!client.ok()) return Fail(2, std::string(client.status().message()));
  client_ = *std::move(client);
  return 0;
}

int Invocation::LoadKubeconfig(bool quiet) {
  if (cluster_connection_) return 0;
  auto connection = LoadClusterConnection(settings_.kube);
  if (!connection.ok()) {
    if (quiet) return 2;
    return Fail(2, absl::StrCat(connection.status().message(),
                                " (kubeconfig mode: no daemon address configured by --address, $",
                                kAddressEnv, " or the config file)"));
  }
  if (settings_.namespace_source.empty()) settings_.namespace_ = connection->namespace_;
  cluster_connection_ = *std::move(connection);
  return 0;
}

int Invocation::ConnectToCluster(bool all_namespaces, bool quiet) {
  if (int code = LoadKubeconfig(quiet)) return code;
  ClusterSession::Options options;
  options.namespace_ = all_namespaces ? "" : settings_.namespace_;
  options.base = [this](definitions::Registry& registry) { return LoadBase(registry); };
  absl::Duration timeout = settings_.request_timeout.value_or(kKubeconfigTimeout);
  if (quiet) timeout = std::min(timeout, kCompletionDeadline);
  options.timeout = timeout;
  std::ostringstream quiet_progress;
  auto session =
      ClusterSession::Start(*cluster_connection_, options, quiet ? quiet_progress : err_);
  if (!session.ok()) return quiet ? 1 : Fail(1, std::string(session.status().message()));
  session_ = *std::move(session);
  client_ = LiveClient::InProcess(session_->channel(), timeout);
  return 0;
}

absl::Status Invocation::LoadBase(definitions::Registry& registry) {
  if (!args_.Has("--no-catalog")) {
    absl::Status s = registry.AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
    if (!s.ok()) return s;
  }
  if (args_.Has("--definitions")) {
    for (const std::string& path : args_.flags.at("--definitions")) {
      absl::Status s = registry.AddPath(path);
      if (!s.ok()) return s;
    }
  }
  std::lock_guard lock(base_mu_);
  base_rejected_ = registry.rejected();
  return absl::OkStatus();
}

void Invocation::PrintSessionWarnings() {
  if (!session_) return;
  for (const std::string& w : session_->Warnings()) err_ << "warning: " << w << "\n";
  std::vector<definitions::Registry::Rejected> rejected;
  {
    std::lock_guard lock(base_mu_);
    rejected = base_rejected_;
  }
  for (const auto& r : rejected) {
    std::vector<std::string> errors;
    for (const auto& f : r.findings) {
      if (f.is_error()) errors.push_back(f.ToString());
    }
    err_ << "warning: definition " << r.name << " (" << r.source
         << ") rejected: " << absl::StrJoin(errors, "; ") << "\n";
  }
}

int Invocation::CallFailed(const grpc::Status& status) {
  return Fail(ExitCodeFor(status), ErrorMessageFor(status, client_->connection()));
}

}  // namespace wm::wmctl
