#include "server/access/testing/review_server.h"

#include <utility>

namespace wm::access::testing {

using kube::testing::ScriptedServer;

ReviewServer::ReviewServer(Decide decide)
    : decide_(std::move(decide)),
      server_([this](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
        Serve(r, out);
      }) {}

kube::ClusterConnection ReviewServer::Connection() const {
  kube::ClusterConnection connection;
  connection.server = server_.url();
  return connection;
}

Json ReviewServer::last_review() const {
  std::lock_guard lock(mu_);
  return last_;
}

void ReviewServer::Serve(const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
  ++reviews_;
  Json review = Json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  {
    std::lock_guard lock(mu_);
    last_ = review;
  }
  if (r.method != "POST" || review.is_discarded()) {
    out.Head(400);
    return;
  }
  int http_status = 201;
  Json status = decide_(r.path, review, &http_status);
  if (http_status != 201) {
    out.Head(http_status);
    out.Write(status.dump());
    return;
  }
  review["status"] = std::move(status);
  out.Head(201, {{"Content-Type", "application/json"}});
  out.Write(review.dump());
}

}  // namespace wm::access::testing
