#ifndef WM_SERVER_CONTROLLERS_EVENT_RECORDER_H_
#define WM_SERVER_CONTROLLERS_EVENT_RECORDER_H_

#include <string>

#include "absl/status/status.h"
#include "server/kube/api_client.h"

namespace wm::controllers {

// The object an event is about.
struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;  // "" for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string resource_version;
};

// Writes core/v1 Events, as client-go's recorder does, so that
// `kubectl describe` and `kubectl get events` show them: an event about a
// cluster-scoped object goes to the "default" namespace. Each call creates
// one Event (no aggregation: callers emit an event only for what is new).
class EventRecorder {
 public:
  struct Options {
    std::string component = "workloadmapd";
    // This replica (the leader election identity): reportingInstance.
    std::string instance;
  };
  EventRecorder(const kube::ApiClient& client, Options options);

  // Creates a Warning event. Fails when the apiserver refuses it or cannot
  // be reached.
  absl::Status Warning(const ObjectReference& object, const std::string& reason,
                       const std::string& message) const;

 private:
  const kube::ApiClient& client_;
  const Options options_;
};

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_EVENT_RECORDER_H_
