#include "server/common/user_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace wm {

std::string QuoteUserText(absl::string_view text) {
  absl::string_view shown = text;
  if (text.size() > kQuotedTextMaxBytes) {
    size_t cut = kQuotedTextMaxBytes;
    // Back off to the start of a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    shown = text.substr(0, cut);
  }
  std::string out = "\"";
  for (char c : shown) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      absl::StrAppendFormat(&out, "\\x%02x", u);
    } else {
      out += c;
    }
  }
  out += '"';
  if (shown.size() < text.size()) {
    // U+2026 HORIZONTAL ELLIPSIS, inside the quotes: the text goes on.
    out.insert(out.size() - 1, "\u2026");
    absl::StrAppend(&out, " (", text.size(), " bytes)");
  }
  return out;
}

}  // namespace wm
