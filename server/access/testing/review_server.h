#ifndef WM_SERVER_ACCESS_TESTING_REVIEW_SERVER_H_
#define WM_SERVER_ACCESS_TESTING_REVIEW_SERVER_H_

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

#include "server/common/json.h"
#include "server/kube/api_client.h"
#include "server/kube/testing/scripted_server.h"

namespace wm::access::testing {

// For tests of what asks the apiserver for reviews: a scripted apiserver
// that answers each POSTed TokenReview or SubjectAccessReview with the
// review and the status `decide` gives it (`decide` may instead set
// `*http_status` and return a whole body: an apiserver error). Records how
// many reviews came and the last one. The real apiserver's reviews are
// tested in integration_tests/kube/access_test.cc.
class ReviewServer {
 public:
  // The status of `review`, POSTed to `path`.
  using Decide = std::function<Json(const std::string& path, const Json& review, int* http_status)>;

  explicit ReviewServer(Decide decide);

  kube::ClusterConnection Connection() const;
  int reviews() const { return reviews_.load(); }
  Json last_review() const;

 private:
  void Serve(const kube::testing::ScriptedServer::Request& r,
             kube::testing::ScriptedServer::Responder& out);

  const Decide decide_;
  std::atomic<int> reviews_{0};
  mutable std::mutex mu_;
  Json last_;
  kube::testing::ScriptedServer server_;  // last: stops before the rest goes
};

}  // namespace wm::access::testing

#endif  // WM_SERVER_ACCESS_TESTING_REVIEW_SERVER_H_
