// A Daemon's HTTP endpoint: metrics, probes, /debug, the JSON API and the
// web page.
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/create_channel.h"
#include "server/daemon/daemon.h"
#include "server/daemon/log.h"
#include "server/web/web_assets.h"

namespace wm::daemon {

observability::HttpServer::Handler Daemon::Guarded(observability::HttpServer::Handler handler) {
  if (authenticator_ == nullptr) return handler;
  return [this, handler = std::move(handler)](const observability::HttpServer::Request& request) {
    using Response = observability::HttpServer::Response;
    absl::Time start = absl::Now();
    access::CallerCredentials credentials;
    absl::StatusOr<access::SharedIdentity> identity =
        absl::UnauthenticatedError("no credentials: send \"Authorization: Bearer <token>\"");
    if (!request.authorization.empty()) {
      absl::StatusOr<absl::string_view> token = access::ParseBearerToken(request.authorization);
      if (!token.ok()) {
        identity = absl::UnauthenticatedError(token.status().message());
      } else {
        credentials.bearer_token = std::string(*token);
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

absl::Status Daemon::StartHttp() {
  if (config_.metrics_address.empty()) return absl::OkStatus();
  observability::HttpServerOptions http_options;
  // API calls hold a handler thread while the service answers (a token
  // or access review may take a round trip to the apiserver).
  http_options.handler_threads = config_.web ? 4 : 2;
  http_ = std::make_unique<observability::HttpServer>(http_options);
  // Sent as it is rendered: a scrape of 100,000 pods is some 50 MB of
  // text that then never exists whole. The handler thread renders and
  // waits for the scraper to read each chunk (at most 10 s per chunk).
  http_->Handle("/metrics", Guarded([this](const observability::HttpServer::Request&) {
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
               : observability::HttpServer::Response{503, "text/plain; charset=utf-8", "syncing\n"};
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

}  // namespace wm::daemon
