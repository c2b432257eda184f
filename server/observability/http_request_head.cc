#include "server/observability/http_request_head.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace wm::observability::internal {
namespace {

// RFC 9110 tchar: what method and header names are made of.
bool IsTokenChar(char c) {
  if (absl::ascii_isalnum(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

ParsedHead Reject(int status, std::string error) {
  ParsedHead out;
  out.status = status;
  out.error = std::move(error);
  return out;
}

// The target part of a request line that may not have ended yet: from the
// first space to the next one (or to the end of what arrived).
absl::string_view TargetSoFar(absl::string_view line) {
  size_t space = line.find(' ');
  if (space == absl::string_view::npos) return "";
  absl::string_view rest = line.substr(space + 1);
  return rest.substr(0, rest.find(' '));
}

// Judges a complete request line (without its CRLF); fills `out` when valid.
bool ParseRequestLine(absl::string_view line, const RequestHeadLimits& limits, ParsedHead* out) {
  size_t first = line.find(' ');
  size_t second =
      first == absl::string_view::npos ? absl::string_view::npos : line.find(' ', first + 1);
  if (second == absl::string_view::npos || line.find(' ', second + 1) != absl::string_view::npos) {
    *out = Reject(400, "request line: want METHOD SP TARGET SP HTTP-VERSION");
    return false;
  }
  absl::string_view method = line.substr(0, first);
  absl::string_view target = line.substr(first + 1, second - first - 1);
  absl::string_view version = line.substr(second + 1);
  if (!IsToken(method)) {
    *out = Reject(400, "request line: the method is not a token");
    return false;
  }
  if (target.empty() || target.front() != '/') {
    *out = Reject(400, "request line: the target must start with '/'");
    return false;
  }
  if (target.find('#') != absl::string_view::npos) {
    *out = Reject(400, "request line: the target has a fragment ('#')");
    return false;
  }
  if (target.size() > limits.max_target_bytes) {
    *out = Reject(
        414, absl::StrCat("request line: the target is over ", limits.max_target_bytes, " bytes"));
    return false;
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !absl::ascii_isdigit(version[5]) ||
      version[6] != '.' || !absl::ascii_isdigit(version[7])) {
    *out = Reject(400, "request line: the version must be HTTP/DIGIT.DIGIT");
    return false;
  }
  if (version[5] != '1') {
    *out = Reject(505, "request line: only HTTP/1.x is served");
    return false;
  }
  if (method != "GET" && method != "HEAD" && !(limits.allow_post && method == "POST")) {
    *out = Reject(405, limits.allow_post ? "request line: only GET, HEAD and POST are served"
                                         : "request line: only GET and HEAD are served");
    return false;
  }
  out->method = std::string(method);
  size_t question = target.find('?');
  out->path = std::string(target.substr(0, question));
  out->query = question == absl::string_view::npos ? "" : std::string(target.substr(question + 1));
  return true;
}

// The headers a head keeps, each at most once.
struct SeenHeaders {
  bool authorization = false;
  bool last_event_id = false;
  bool content_length = false;
  bool content_type = false;
  bool transfer_encoding = false;
};

// Keeps `value` in `*field` unless the header came before (400).
bool KeepOnce(absl::string_view name, absl::string_view value, bool& seen, std::string* field,
              ParsedHead* out) {
  if (seen) {
    *out = Reject(400, absl::StrCat("header line: a second ", name, " header"));
    return false;
  }
  seen = true;
  *field = std::string(absl::StripAsciiWhitespace(value));
  return true;
}

// Judges a complete header line (without its CRLF).
bool ValidHeaderLine(absl::string_view line, const RequestHeadLimits& limits, SeenHeaders& seen,
                     ParsedHead* out) {
  if (line.front() == ' ' || line.front() == '\t') {
    *out = Reject(400, "header line: folded (starts with whitespace)");
    return false;
  }
  size_t colon = line.find(':');
  if (colon == absl::string_view::npos || !IsToken(line.substr(0, colon))) {
    *out = Reject(400, "header line: want NAME: VALUE with NAME a token");
    return false;
  }
  absl::string_view name = line.substr(0, colon);
  absl::string_view value = line.substr(colon + 1);
  if (absl::EqualsIgnoreCase(name, "authorization")) {
    return KeepOnce("Authorization", value, seen.authorization, &out->authorization, out);
  }
  if (absl::EqualsIgnoreCase(name, "last-event-id")) {
    return KeepOnce("Last-Event-ID", value, seen.last_event_id, &out->last_event_id, out);
  }
  if (!limits.allow_post) return true;
  if (absl::EqualsIgnoreCase(name, "content-type")) {
    return KeepOnce("Content-Type", value, seen.content_type, &out->content_type, out);
  }
  if (absl::EqualsIgnoreCase(name, "transfer-encoding")) {
    seen.transfer_encoding = true;
    return true;
  }
  if (absl::EqualsIgnoreCase(name, "content-length")) {
    std::string length;
    if (!KeepOnce("Content-Length", value, seen.content_length, &length, out)) return false;
    // Digits only (no sign, no list): a length two parsers could read
    // differently is how requests are smuggled.
    if (length.empty() || length.size() > 15 ||
        !std::all_of(length.begin(), length.end(), absl::ascii_isdigit)) {
      *out = Reject(400, "header line: Content-Length is not a decimal number");
      return false;
    }
    out->content_length = std::stoll(length);
  }
  return true;
}

}  // namespace

ParsedHead ParseRequestHead(absl::string_view bytes, const RequestHeadLimits& limits) {
  absl::string_view window = bytes.substr(0, limits.max_head_bytes);
  ParsedHead out;
  size_t line_start = 0;
  bool request_line_done = false;
  SeenHeaders seen;
  for (size_t i = 0; i < window.size(); ++i) {
    char c = window[i];
    if (c == '\n') return Reject(400, absl::StrCat("bare LF at offset ", i));
    if (c == '\r') {
      if (i + 1 == window.size()) break;  // its LF may follow
      if (window[i + 1] != '\n') return Reject(400, absl::StrCat("bare CR at offset ", i));
      absl::string_view line = window.substr(line_start, i - line_start);
      if (!request_line_done) {
        if (!ParseRequestLine(line, limits, &out)) return out;
        request_line_done = true;
      } else if (line.empty()) {
        if (out.method == "POST" && seen.transfer_encoding) {
          return Reject(501, "Transfer-Encoding is not served: send Content-Length");
        }
        if (out.method == "POST" && out.content_length < 0) {
          return Reject(411, "a POST needs Content-Length");
        }
        out.status = 200;
        out.size = i + 2;
        return out;
      } else if (!ValidHeaderLine(line, limits, seen, &out)) {
        return out;
      }
      ++i;  // the LF
      line_start = i + 1;
      continue;
    }
    bool printable = c >= 0x20 && c <= 0x7e;
    if (!printable && c != '\t') {
      return Reject(400, absl::StrCat("byte 0x", absl::Hex(static_cast<unsigned char>(c)),
                                      " at offset ", i, " is not printable ASCII"));
    }
    if (!request_line_done && c == '\t') {
      return Reject(400, absl::StrCat("tab in the request line at offset ", i));
    }
  }
  if (!request_line_done &&
      TargetSoFar(window.substr(line_start)).size() > limits.max_target_bytes) {
    return Reject(
        414, absl::StrCat("request line: the target is over ", limits.max_target_bytes, " bytes"));
  }
  if (bytes.size() >= limits.max_head_bytes) {
    return Reject(431,
                  absl::StrCat("the head did not end within ", limits.max_head_bytes, " bytes"));
  }
  return ParsedHead();
}

}  // namespace wm::observability::internal
