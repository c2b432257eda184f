#include "server/controllers/event_recorder.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/common/json.h"

namespace wm::controllers {
namespace {

// Longer messages are cut: events.k8s.io/v1 refuses more than 1 KiB, and
// an event is a pointer to the object's status, not a log.
constexpr size_t kMaxMessageBytes = 1024;

std::string Cut(std::string text) {
  if (text.size() <= kMaxMessageBytes) return text;
  size_t end = kMaxMessageBytes - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "...";
}

}  // namespace

EventRecorder::EventRecorder(const kube::ApiClient& client, Options options)
    : client_(client), options_(std::move(options)) {}

absl::Status EventRecorder::Warning(const ObjectReference& object, const std::string& reason,
                                    const std::string& message) const {
  std::string namespace_ = object.namespace_.empty() ? "default" : object.namespace_;
  std::string now = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  Json involved = {{"apiVersion", object.api_version},
                   {"kind", object.kind},
                   {"name", object.name},
                   {"uid", object.uid},
                   {"resourceVersion", object.resource_version}};
  if (!object.namespace_.empty()) involved["namespace"] = object.namespace_;
  Json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"generateName", object.name + "."}, {"namespace", namespace_}}},
                {"involvedObject", std::move(involved)},
                {"type", "Warning"},
                {"reason", reason},
                {"message", Cut(message)},
                {"source", {{"component", options_.component}}},
                {"reportingComponent", options_.component},
                {"reportingInstance", options_.instance},
                {"firstTimestamp", now},
                {"lastTimestamp", now},
                {"count", 1}};
  kube::HttpRequest request;
  request.method = "POST";
  request.path = absl::StrCat("/api/v1/namespaces/", namespace_, "/events");
  request.content_type = "application/json";
  request.body = event.dump();
  auto response = client_.Do(request);
  if (!response.ok()) return response.status();
  if (response->status / 100 != 2) {
    return absl::UnavailableError(absl::StrCat("creating an event: HTTP ", response->status, ": ",
                                               kube::StatusMessage(response->body)));
  }
  return absl::OkStatus();
}

}  // namespace wm::controllers
