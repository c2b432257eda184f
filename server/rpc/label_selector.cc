#include "server/rpc/label_selector.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wm::rpc {
namespace {

bool ValidToken(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

// Splits at commas outside parentheses.
std::vector<absl::string_view> SplitRequirements(absl::string_view text) {
  std::vector<absl::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(absl::StripAsciiWhitespace(text.substr(start, i - start)));
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<LabelSelector> LabelSelector::Parse(absl::string_view text) {
  LabelSelector selector;
  if (absl::StripAsciiWhitespace(text).empty()) return selector;
  for (absl::string_view part : SplitRequirements(text)) {
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("label_selector: \"", part, "\": ", why));
    };
    Requirement r;
    size_t op_at;
    if (absl::ConsumePrefix(&part, "!")) {
      r.key = std::string(absl::StripAsciiWhitespace(part));
      r.op = Op::kDoesNotExist;
    } else if ((op_at = part.find("!=")) != absl::string_view::npos) {
      r.key = std::string(absl::StripAsciiWhitespace(part.substr(0, op_at)));
      r.op = Op::kNotIn;
      r.values.emplace_back(absl::StripAsciiWhitespace(part.substr(op_at + 2)));
    } else if ((op_at = part.find('=')) != absl::string_view::npos) {
      r.key = std::string(absl::StripAsciiWhitespace(part.substr(0, op_at)));
      r.op = Op::kIn;
      absl::string_view value = part.substr(op_at + 1);
      absl::ConsumePrefix(&value, "=");
      r.values.emplace_back(absl::StripAsciiWhitespace(value));
    } else if (size_t paren = part.find('('); paren != absl::string_view::npos) {
      if (part.back() != ')') return bad("missing )");
      std::vector<absl::string_view> words =
          absl::StrSplit(part.substr(0, paren), ' ', absl::SkipWhitespace());
      if (words.size() != 2 || (words[1] != "in" && words[1] != "notin")) {
        return bad("expected `key in (...)` or `key notin (...)`");
      }
      r.key = std::string(words[0]);
      r.op = words[1] == "in" ? Op::kIn : Op::kNotIn;
      for (absl::string_view v :
           absl::StrSplit(part.substr(paren + 1, part.size() - paren - 2), ',')) {
        r.values.emplace_back(absl::StripAsciiWhitespace(v));
      }
    } else {
      r.key = std::string(part);
      r.op = Op::kExists;
    }
    if (!ValidToken(r.key)) return bad("invalid key");
    for (const std::string& v : r.values) {
      if (!v.empty() && !ValidToken(v)) return bad(absl::StrCat("invalid value \"", v, "\""));
    }
    selector.requirements_.push_back(std::move(r));
  }
  return selector;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const Requirement& r : requirements_) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    bool listed = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    switch (r.op) {
      case Op::kIn:
        if (!listed) return false;
        break;
      case Op::kNotIn:
        if (listed) return false;
        break;
      case Op::kExists:
        if (!has) return false;
        break;
      case Op::kDoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

}  // namespace wm::rpc
