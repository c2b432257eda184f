#include "server/resolution/field_error.h"

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace wm::resolution {
namespace {

// A payload type URL of our own: payloads never leave the process (RPC
// errors carry the message only).
constexpr absl::string_view kFieldPathPayload = "type.workloadmap.dev/wm.resolution.FieldPath";

}  // namespace

absl::Status FieldError(absl::StatusCode code, absl::string_view field, absl::string_view detail) {
  return WithFieldPath(absl::Status(code, absl::StrCat(field, ": ", detail)), field);
}

absl::Status WithFieldPath(absl::Status status, absl::string_view field) {
  if (!status.ok()) status.SetPayload(kFieldPathPayload, absl::Cord(field));
  return status;
}

std::string FieldPathOf(const absl::Status& status) {
  auto field = status.GetPayload(kFieldPathPayload);  // absl::optional<absl::Cord>
  return field ? std::string(*field) : "";
}

std::string DetailOf(const absl::Status& status) {
  std::string prefix = absl::StrCat(FieldPathOf(status), ": ");
  absl::string_view message = status.message();
  if (prefix.size() > 2 && absl::StartsWith(message, prefix)) message.remove_prefix(prefix.size());
  return std::string(message);
}

}  // namespace wm::resolution
