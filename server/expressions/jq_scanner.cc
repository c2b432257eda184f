#include "server/expressions/jq_scanner.h"

#include <array>
#include <cctype>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace wm::expressions {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Scanner {
 public:
  explicit Scanner(absl::string_view src) : src_(src) {}

  absl::Status Scan(std::vector<JqToken>& out) { return ScanUntil(out, false); }

 private:
  // Scans tokens until the end of input or, inside an interpolation, the
  // `)` that closes it (depth counts nested parentheses).
  absl::Status ScanUntil(std::vector<JqToken>& out, bool in_interpolation) {
    int depth = 0;
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
        continue;
      }
      if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
        continue;
      }
      size_t start = pos_;
      if (c == '"') {
        absl::Status s = ScanString(out);
        if (!s.ok()) return s;
        continue;
      }
      if (in_interpolation && c == ')' && depth == 0) {
        ++pos_;
        return absl::OkStatus();
      }
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (IsIdentStart(c)) {
        while (pos_ < src_.size() && (IsIdentChar(src_[pos_]) ||
                                      (src_.substr(pos_, 2) == "::" && pos_ + 2 < src_.size() &&
                                       IsIdentStart(src_[pos_ + 2])))) {
          pos_ += src_[pos_] == ':' ? 2 : 1;
        }
        Emit(out, JqToken::Kind::kIdentifier, start);
        continue;
      }
      if (c == '$' || c == '@') {
        ++pos_;
        if (src_.substr(pos_, 7) == "__loc__") {
          pos_ += 7;
        } else {
          while (pos_ < src_.size() && (IsIdentChar(src_[pos_]) || src_.substr(pos_, 2) == "::")) {
            pos_ += src_[pos_] == ':' ? 2 : 1;
          }
        }
        if (pos_ == start + 1) return Error("expected a name after", start);
        Emit(out, c == '$' ? JqToken::Kind::kVariable : JqToken::Kind::kFormat, start);
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && pos_ + 1 < src_.size() &&
           std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])))) {
        while (pos_ < src_.size() &&
               (std::isdigit(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '.')) {
          ++pos_;
        }
        if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
          ++pos_;
          if (pos_ < src_.size() && (src_[pos_] == '+' || src_[pos_] == '-')) ++pos_;
          while (pos_ < src_.size() && std::isdigit(static_cast<unsigned char>(src_[pos_]))) ++pos_;
        }
        Emit(out, JqToken::Kind::kNumber, start);
        continue;
      }
      if (c == '.' && pos_ + 1 < src_.size() && IsIdentStart(src_[pos_ + 1])) {
        ++pos_;
        while (pos_ < src_.size() && IsIdentChar(src_[pos_])) ++pos_;
        Emit(out, JqToken::Kind::kField, start);
        continue;
      }
      // Longest operator first.
      static constexpr std::array<absl::string_view, 18> kOperators = {
          "?//", "//=", "|=", "+=", "-=", "*=", "/=", "%=", "==",
          "!=",  "<=",  ">=", "//", "..", "=",  "<",  ">",  "|"};
      bool matched = false;
      for (absl::string_view op : kOperators) {
        if (src_.substr(pos_, op.size()) == op) {
          pos_ += op.size();
          Emit(out, JqToken::Kind::kOperator, start);
          matched = true;
          break;
        }
      }
      if (matched) continue;
      if (absl::string_view(",+-*/%()[]{}:;.?").find(c) != absl::string_view::npos) {
        ++pos_;
        Emit(out, JqToken::Kind::kOperator, start);
        continue;
      }
      return Error("unexpected character", start);
    }
    if (in_interpolation) return Error("unterminated string interpolation", pos_);
    return absl::OkStatus();
  }

  absl::Status ScanString(std::vector<JqToken>& out) {
    size_t start = pos_++;
    size_t token_index = out.size();
    out.push_back({JqToken::Kind::kString, "", start});
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == '"') {
        ++pos_;
        out[token_index].text = std::string(src_.substr(start, pos_ - start));
        return absl::OkStatus();
      }
      if (c == '\\') {
        if (pos_ + 1 < src_.size() && src_[pos_ + 1] == '(') {
          pos_ += 2;
          absl::Status s = ScanUntil(out, true);
          if (!s.ok()) return s;
          continue;
        }
        pos_ += 2;
        continue;
      }
      ++pos_;
    }
    return Error("unterminated string", start);
  }

  void Emit(std::vector<JqToken>& out, JqToken::Kind kind, size_t start) {
    out.push_back({kind, std::string(src_.substr(start, pos_ - start)), start});
  }

  absl::Status Error(absl::string_view what, size_t at) {
    return absl::InvalidArgumentError(absl::StrCat(what, " at offset ", at));
  }

  absl::string_view src_;
  size_t pos_ = 0;
};

bool IsOperator(const JqToken& t, absl::string_view text) {
  return t.kind == JqToken::Kind::kOperator && t.text == text;
}

}  // namespace

absl::StatusOr<std::vector<JqToken>> ScanJq(absl::string_view source) {
  std::vector<JqToken> tokens;
  Scanner scanner(source);
  absl::Status status = scanner.Scan(tokens);
  if (!status.ok()) return status;
  return tokens;
}

std::vector<std::string> FindForbiddenConstructs(absl::string_view source) {
  static const absl::flat_hash_set<absl::string_view> kReadOnly = {"del",     "range", "paths",
                                                                   "recurse", "walk",  "repeat"};
  static const absl::flat_hash_set<absl::string_view> kNoEnvironment = {"env",
                                                                        "input",
                                                                        "inputs",
                                                                        "input_filename",
                                                                        "debug",
                                                                        "stderr",
                                                                        "halt",
                                                                        "halt_error",
                                                                        "input_line_number",
                                                                        "get_search_list",
                                                                        "get_prog_origin",
                                                                        "get_jq_origin",
                                                                        "import",
                                                                        "include",
                                                                        "$__prog_args",
                                                                        "modulemeta"};
  static const absl::flat_hash_set<absl::string_view> kAssignments = {
      "=", "|=", "+=", "-=", "*=", "/=", "%=", "//="};
  std::vector<std::string> findings;
  auto tokens = ScanJq(source);
  if (!tokens.ok()) return findings;  // the compiler reports syntax errors
  const std::vector<JqToken>& t = *tokens;
  for (size_t i = 0; i < t.size(); ++i) {
    const JqToken& token = t[i];
    switch (token.kind) {
      case JqToken::Kind::kOperator:
        if (kAssignments.contains(token.text)) {
          findings.push_back(absl::StrCat("assignment operator ", token.text,
                                          " is not allowed (expressions are read-only)"));
        } else if (token.text == "..") {
          findings.push_back("recursive descent (..) is not allowed");
        }
        break;
      case JqToken::Kind::kVariable:
        if (token.text == "$ENV" || token.text == "$__loc__" || token.text == "$__prog_args") {
          findings.push_back(absl::StrCat(token.text,
                                          " is not allowed (definitions must not read the daemon's "
                                          "environment)"));
        }
        break;
      case JqToken::Kind::kIdentifier: {
        // `{name: ...}` and `{name}` use the identifier as an object key.
        bool object_key =
            i > 0 && (IsOperator(t[i - 1], "{") || IsOperator(t[i - 1], ",")) && i + 1 < t.size() &&
            (IsOperator(t[i + 1], ":") || IsOperator(t[i + 1], ",") || IsOperator(t[i + 1], "}"));
        if (object_key) break;
        if (kReadOnly.contains(token.text)) {
          findings.push_back(absl::StrCat(token.text, " function is not allowed"));
        } else if (kNoEnvironment.contains(token.text)) {
          findings.push_back(absl::StrCat(token.text,
                                          " is not allowed (definitions must not read the daemon's "
                                          "environment, inputs or files, nor write logs)"));
        }
        break;
      }
      default:
        break;
    }
  }
  return findings;
}

std::string RewriteElselessIf(absl::string_view source) {
  auto tokens = ScanJq(source);
  if (!tokens.ok()) return std::string(source);
  std::vector<bool> open_ifs_have_else;
  std::vector<size_t> insert_at;
  for (const JqToken& t : *tokens) {
    if (t.kind != JqToken::Kind::kIdentifier) continue;
    if (t.text == "if") {
      open_ifs_have_else.push_back(false);
    } else if (t.text == "else" && !open_ifs_have_else.empty()) {
      open_ifs_have_else.back() = true;
    } else if (t.text == "end" && !open_ifs_have_else.empty()) {
      if (!open_ifs_have_else.back()) insert_at.push_back(t.offset);
      open_ifs_have_else.pop_back();
    }
  }
  std::string out(source);
  for (auto it = insert_at.rbegin(); it != insert_at.rend(); ++it) {
    out.insert(*it, "else . ");
  }
  return out;
}

}  // namespace wm::expressions
