// What a Daemon writes while it leads, and the election that decides it.
#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "server/daemon/daemon.h"
#include "server/daemon/log.h"

namespace wm::daemon {

void Daemon::AddControllers() {
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

controllers::PodGroupController::Options Daemon::PodGroupOptions() const {
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

void Daemon::AddPodGroupControllers() {
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

void Daemon::AddCatalogPublications() {
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

absl::Status Daemon::StartLeaderElection() {
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

}  // namespace wm::daemon
