#ifndef WM_SERVER_CONTROLLERS_CATALOG_PUBLICATION_H_
#define WM_SERVER_CONTROLLERS_CATALOG_PUBLICATION_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/controllers/catalog_publisher.h"
#include "server/kube/api_client.h"

namespace wm::controllers {

// The daemon's --publish-catalog: PublishKartas of the catalog to one
// cluster each time this replica starts leading, on a thread of its own
// (the elector's callbacks must not block), retried with backoff (2 s
// doubling to 60 s) while a run fails and the replica still leads. Once a
// term: a Karta a user deletes is not brought back until the next leader.
class CatalogPublication {
 public:
  // Told of each run's results, or of why it failed as a whole.
  using Report = std::function<void(const absl::StatusOr<std::vector<PublishedKarta>>& results)>;

  // REQUIRES: `client` outlives this.
  CatalogPublication(const kube::ApiClient& client,
                     std::vector<std::pair<std::string, std::string>> documents,
                     std::function<bool()> may_write, Report report);
  ~CatalogPublication();
  CatalogPublication(const CatalogPublication&) = delete;
  CatalogPublication& operator=(const CatalogPublication&) = delete;

  // Asks for a run (cheap; any thread).
  void StartedLeading();
  void Start();
  void Stop();

 private:
  void Run();

  const kube::ApiClient& client_;
  const std::vector<std::pair<std::string, std::string>> documents_;
  const std::function<bool()> may_write_;
  const Report report_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool due_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_CATALOG_PUBLICATION_H_
