#include "server/rpc/label_selector.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/common/kube_names.h"
#include "server/common/user_text.h"

namespace wm::rpc {
namespace {

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
  if (text.size() > kMaxLabelSelectorBytes) {
    return absl::InvalidArgumentError(absl::StrCat("label_selector: ", text.size(),
                                                   " bytes, more than the ", kMaxLabelSelectorBytes,
                                                   " a selector may have"));
  }
  if (absl::StripAsciiWhitespace(text).empty()) return selector;
  for (absl::string_view part : SplitRequirements(text)) {
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("label_selector: ", QuoteUserText(part), ": ", why));
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
    if (std::string problem = QualifiedNameProblem(r.key); !problem.empty()) {
      return bad(absl::StrCat("key ", QuoteUserText(r.key), ": ", problem));
    }
    for (const std::string& v : r.values) {
      if (std::string problem = LabelValueProblem(v); !problem.empty()) {
        return bad(absl::StrCat("value ", QuoteUserText(v), ": ", problem));
      }
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
