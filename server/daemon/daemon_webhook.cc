// A Daemon's admission webhook: Kartas validated, pods placed.
#include "absl/strings/str_cat.h"
#include "server/admission/karta_review.h"
#include "server/admission/pod_review.h"
#include "server/common/json_path.h"
#include "server/daemon/daemon.h"
#include "server/daemon/log.h"

namespace wm::daemon {

absl::Status Daemon::StartWebhook() {
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
    absl::StatusOr<admission::KartaReview> review = admission::ReviewKarta(request.body, *engine_);
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
    webhook_->Handle("/mutate-pod", [this, groups](const admission::HttpsServer::Request& request) {
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

}  // namespace wm::daemon
