#include "server/kube/watch_stream.h"

#include <simdjson.h>

#include "absl/strings/str_cat.h"

namespace wm::kube {

LineFramer::LineFramer(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

absl::Status LineFramer::Feed(absl::string_view bytes,
                              absl::FunctionRef<absl::Status(absl::string_view)> on_line) {
  auto emit = [&](absl::string_view line) -> absl::Status {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return absl::OkStatus();
    return on_line(line);
  };
  // Complete the line carried over from earlier reads first; then hand out
  // lines straight from `bytes` without copying.
  size_t newline = bytes.find('\n');
  if (!buffer_.empty()) {
    if (newline == absl::string_view::npos) {
      if (buffer_.size() + bytes.size() > max_line_bytes_) {
        return absl::ResourceExhaustedError(
            absl::StrCat("watch event longer than ", max_line_bytes_, " bytes"));
      }
      buffer_.append(bytes.data(), bytes.size());
      return absl::OkStatus();
    }
    buffer_.append(bytes.data(), newline);
    std::string line = std::move(buffer_);
    buffer_.clear();
    absl::Status status = emit(line);
    if (!status.ok()) return status;
    bytes.remove_prefix(newline + 1);
    newline = bytes.find('\n');
  }
  while (newline != absl::string_view::npos) {
    absl::Status status = emit(bytes.substr(0, newline));
    if (!status.ok()) return status;
    bytes.remove_prefix(newline + 1);
    newline = bytes.find('\n');
  }
  if (bytes.size() > max_line_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("watch event longer than ", max_line_bytes_, " bytes"));
  }
  buffer_.assign(bytes.data(), bytes.size());
  return absl::OkStatus();
}

const char* EventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
    case EventType::kBookmark:
      return "BOOKMARK";
    case EventType::kError:
      return "ERROR";
  }
  return "?";
}

absl::StatusOr<WatchEvent> DecodeWatchEvent(absl::string_view line, ObjectShape shape,
                                            simdjson::dom::parser& parser) {
  simdjson::dom::element event;
  if (auto error = parser.parse(line.data(), line.size()).get(event); error) {
    return absl::InvalidArgumentError(
        absl::StrCat("watch event is not JSON: ", simdjson::error_message(error)));
  }
  std::string_view type;
  simdjson::dom::element object;
  if (event["type"].get(type) != simdjson::SUCCESS ||
      event["object"].get(object) != simdjson::SUCCESS || !object.is_object()) {
    return absl::InvalidArgumentError("watch event without type or object");
  }
  WatchEvent out;
  std::string_view rv;
  if (object["metadata"]["resourceVersion"].get(rv) == simdjson::SUCCESS) {
    out.resource_version = std::string(rv);
  }
  if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
    out.type = type == "ADDED"      ? EventType::kAdded
               : type == "MODIFIED" ? EventType::kModified
                                    : EventType::kDeleted;
    absl::StatusOr<std::shared_ptr<const CachedObject>> decoded =
        CachedObject::Decode(object, shape);
    if (!decoded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(std::string(type), " event: ", decoded.status().message()));
    }
    out.object = *std::move(decoded);
    return out;
  }
  if (type == "BOOKMARK") {
    out.type = EventType::kBookmark;
    std::string_view end;
    out.initial_events_end = object["metadata"]["annotations"]["k8s.io/initial-events-end"].get(
                                 end) == simdjson::SUCCESS &&
                             end == "true";
    return out;
  }
  if (type == "ERROR") {
    out.type = EventType::kError;
    int64_t code = 0;
    if (object["code"].get(code) == simdjson::SUCCESS) out.error_code = static_cast<int>(code);
    std::string_view text;
    if (object["reason"].get(text) == simdjson::SUCCESS) out.error_reason = std::string(text);
    if (object["message"].get(text) == simdjson::SUCCESS) out.error_message = std::string(text);
    return out;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown watch event type \"", std::string(type), "\""));
}

}  // namespace wm::kube
