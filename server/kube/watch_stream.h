#ifndef WM_SERVER_KUBE_WATCH_STREAM_H_
#define WM_SERVER_KUBE_WATCH_STREAM_H_

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/kube/object.h"

namespace simdjson::dom {
class parser;
}

namespace wm::kube {

// Splits a watch response body into its newline-delimited JSON events.
// Chunk boundaries are arbitrary: a read may hold part of an event or many
// events. A trailing "\r" is removed; empty lines are skipped.
class LineFramer {
 public:
  // Lines longer than `max_line_bytes` fail the stream (the caller drops
  // the connection and relists) instead of growing without bound.
  explicit LineFramer(size_t max_line_bytes = size_t{256} << 20);

  // Feeds received bytes; calls `on_line` for each complete line, stopping
  // at the first error it returns.
  absl::Status Feed(absl::string_view bytes,
                    absl::FunctionRef<absl::Status(absl::string_view)> on_line);

  // Bytes of an unfinished line (dropped when the stream ends there).
  size_t pending_bytes() const { return buffer_.size(); }
  void Reset() { buffer_.clear(); }

 private:
  size_t max_line_bytes_;
  std::string buffer_;
};

enum class EventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  EventType type = EventType::kAdded;
  // The object of ADDED, MODIFIED and DELETED.
  std::shared_ptr<const CachedObject> object;
  // metadata.resourceVersion of the object or bookmark.
  std::string resource_version;
  // A BOOKMARK annotated k8s.io/initial-events-end: the initial state of a
  // WatchList request is complete.
  bool initial_events_end = false;
  // ERROR events carry a Status: its code ("410"), reason and message.
  int error_code = 0;
  std::string error_reason, error_message;
};

// Decodes one event line. Malformed JSON or a missing type/object is an
// InvalidArgument error (the stream cannot be trusted after it).
absl::StatusOr<WatchEvent> DecodeWatchEvent(absl::string_view line, ObjectShape shape,
                                            simdjson::dom::parser& parser);

const char* EventTypeName(EventType type);

}  // namespace wm::kube

#endif  // WM_SERVER_KUBE_WATCH_STREAM_H_
