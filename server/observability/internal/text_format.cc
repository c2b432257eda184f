#include "server/observability/internal/text_format.h"

namespace wm::observability::internal {
namespace {

void AppendEscaped(absl::string_view text, bool quotes, std::string* out) {
  // Most values need no escape: copied whole.
  if (text.find_first_of(quotes ? absl::string_view("\\\n\"") : absl::string_view("\\\n")) ==
      absl::string_view::npos) {
    out->append(text.data(), text.size());
    return;
  }
  for (char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '"' && quotes) {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

void AppendLabelValue(absl::string_view value, std::string* out) {
  AppendEscaped(value, true, out);
}

void AppendHelp(absl::string_view help, std::string* out) { AppendEscaped(help, false, out); }

}  // namespace wm::observability::internal
