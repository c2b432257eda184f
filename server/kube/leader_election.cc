#include "server/kube/leader_election.h"

#include <cmath>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/common/json.h"
#include "server/common/json_reader.h"

namespace wm::kube {
namespace {

// client-go's JitterFactor: an acquiring candidate waits retry_period plus
// up to 1.2 times it, so that candidates do not try in step.
constexpr double kJitterFactor = 1.2;

std::string MicroTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::Create(const ApiClient& client,
                                                                     LeaderElectionConfig config) {
  auto invalid = [](absl::string_view field, absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("leader election: ", field, " ", why));
  };
  if (config.namespace_.empty()) return invalid("namespace", "is required");
  if (config.name.empty()) return invalid("name", "is required");
  if (config.identity.empty()) return invalid("identity", "is required");
  if (config.retry_period <= absl::ZeroDuration())
    return invalid("retry_period", "must be positive");
  if (config.renew_deadline <= config.retry_period * kJitterFactor) {
    return invalid("renew_deadline",
                   absl::StrCat("(", absl::FormatDuration(config.renew_deadline),
                                ") must exceed retry_period times 1.2 (",
                                absl::FormatDuration(config.retry_period * 1.2), ")"));
  }
  if (config.lease_duration <= config.renew_deadline) {
    return invalid("lease_duration",
                   absl::StrCat("(", absl::FormatDuration(config.lease_duration),
                                ") must exceed renew_deadline (",
                                absl::FormatDuration(config.renew_deadline), ")"));
  }
  return std::unique_ptr<LeaderElector>(new LeaderElector(client, std::move(config)));
}

LeaderElector::LeaderElector(const ApiClient& client, LeaderElectionConfig config)
    : client_(client),
      config_(std::move(config)),
      path_(absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/", config_.namespace_, "/leases/",
                         config_.name)) {}

LeaderElector::~LeaderElector() { Stop(/*release=*/false); }

void LeaderElector::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Run(); });
}

void LeaderElector::Stop(bool release) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  bool was_leading = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    was_leading = leading_;
  }
  if (was_leading && release) Release();
  SetLeading(false);
}

bool LeaderElector::IsLeader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return leading_ && absl::Now() - last_renew_ < config_.renew_deadline;
}

std::string LeaderElector::leader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return observed_holder_;
}

void LeaderElector::Run() {
  // Its own generator: Abseil's shared seed pool, not instrumented in
  // Debian's build, would read to TSan as a race between electors.
  std::mt19937 random{std::random_device{}()};
  std::uniform_real_distribution<double> jitter(0.0, kJitterFactor);
  while (true) {
    // A renewal counts from before it was sent: the Lease says "renewed"
    // from some instant after this one.
    const absl::Time attempt = absl::Now();
    bool held = TryAcquireOrRenew();
    bool leading = false;
    bool lost = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      absl::Time now = absl::Now();
      if (held) {
        last_renew_ = attempt;
      } else if (leading_ && now - last_renew_ >= config_.renew_deadline) {
        lost = true;
      }
      leading = held || (leading_ && !lost);
    }
    SetLeading(leading);
    absl::Duration wait = config_.retry_period;
    if (!leading) wait += config_.retry_period * jitter(random);
    if (!Sleep(wait)) return;
  }
}

bool LeaderElector::Sleep(absl::Duration period) {
  std::unique_lock<std::mutex> lock(mu_);
  stop_cv_.wait_for(lock, absl::ToChronoMilliseconds(period), [this] { return stopping_; });
  return !stopping_;
}

void LeaderElector::SetLeading(bool leading) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (leading_ == leading) return;
    leading_ = leading;
  }
  if (leading) {
    times_led_.fetch_add(1);
    if (config_.on_started_leading) config_.on_started_leading();
  } else if (config_.on_stopped_leading) {
    config_.on_stopped_leading();
  }
}

void LeaderElector::Observe(const std::string& holder) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (observed_holder_ == holder) return;
    observed_holder_ = holder;
  }
  if (config_.on_new_leader) config_.on_new_leader(holder);
}

bool LeaderElector::TryAcquireOrRenew() {
  const absl::Time now = absl::Now();
  const int64_t lease_seconds =
      static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(config_.lease_duration)));
  // Each call is bounded well inside the renewal deadline.
  const absl::Duration timeout = std::min(config_.renew_deadline / 2, absl::Seconds(10));
  absl::StatusOr<HttpResponse> got = client_.Do({.path = path_, .timeout = timeout});
  if (!got.ok()) return false;
  Json spec = {{"holderIdentity", config_.identity},
               {"leaseDurationSeconds", lease_seconds},
               {"acquireTime", MicroTime(now)},
               {"renewTime", MicroTime(now)},
               {"leaseTransitions", 0}};
  if (got->status == 404) {
    Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", config_.name}, {"namespace", config_.namespace_}}},
                  {"spec", spec}};
    absl::StatusOr<HttpResponse> created =
        client_.Do({.method = "POST",
                    .path = absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                                         config_.namespace_, "/leases"),
                    .body = lease.dump(),
                    .content_type = "application/json",
                    .timeout = timeout});
    if (!created.ok() || created->status != 201) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      observed_record_ = spec.dump();
      observed_at_ = now;
    }
    Observe(config_.identity);
    return true;
  }
  if (got->status != 200) return false;
  absl::StatusOr<Json> lease = ParseJson(got->body);
  if (!lease.ok() || !lease->is_object()) return false;
  const Json& old = (*lease)["spec"];
  std::string holder = old.is_object() ? old.value("holderIdentity", "") : "";
  std::string record = old.dump();
  bool expired = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (record != observed_record_) {
      observed_record_ = record;
      observed_at_ = now;
    }
    // Expiry as this candidate observed it, by the holder's own duration.
    absl::Duration duration = config_.lease_duration;
    if (old.is_object() && old.contains("leaseDurationSeconds") &&
        old["leaseDurationSeconds"].is_number_integer()) {
      duration = absl::Seconds(old["leaseDurationSeconds"].get<int64_t>());
    }
    expired = observed_at_ + duration <= now;
  }
  Observe(holder);
  if (!holder.empty() && holder != config_.identity && !expired) return false;
  if (holder == config_.identity) {
    spec["acquireTime"] = old.value("acquireTime", MicroTime(now));
    spec["leaseTransitions"] = old.value("leaseTransitions", 0);
  } else {
    spec["leaseTransitions"] = old.is_object() ? old.value("leaseTransitions", 0) + 1 : 1;
  }
  (*lease)["spec"] = spec;
  // The resourceVersion read stays in metadata: a concurrent update makes
  // this one fail with 409 rather than overwrite it.
  absl::StatusOr<HttpResponse> updated = client_.Do({.method = "PUT",
                                                     .path = path_,
                                                     .body = lease->dump(),
                                                     .content_type = "application/json",
                                                     .timeout = timeout});
  if (!updated.ok() || updated->status != 200) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    observed_record_ = spec.dump();
    observed_at_ = now;
  }
  Observe(config_.identity);
  return true;
}

void LeaderElector::Release() {
  absl::StatusOr<HttpResponse> got = client_.Do({.path = path_, .timeout = absl::Seconds(5)});
  if (!got.ok() || got->status != 200) return;
  absl::StatusOr<Json> lease = ParseJson(got->body);
  if (!lease.ok() || !lease->is_object() || !(*lease)["spec"].is_object()) return;
  Json& spec = (*lease)["spec"];
  if (spec.value("holderIdentity", "") != config_.identity) return;
  // As client-go releases: no holder, a one-second duration, so the next
  // candidate takes it at its next try.
  absl::Time now = absl::Now();
  spec["holderIdentity"] = "";
  spec["leaseDurationSeconds"] = 1;
  spec["acquireTime"] = MicroTime(now);
  spec["renewTime"] = MicroTime(now);
  (void)client_.Do({.method = "PUT",
                    .path = path_,
                    .body = lease->dump(),
                    .content_type = "application/json",
                    .timeout = absl::Seconds(5)});
  Observe("");
}

}  // namespace wm::kube
