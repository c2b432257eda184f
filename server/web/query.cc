#include "server/web/query.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/common/user_text.h"

namespace wm::web {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

absl::StatusOr<std::string> PercentDecode(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    int high = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
    int low = high >= 0 ? HexValue(text[i + 2]) : -1;
    if (low < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("malformed percent escape at offset ", i, " of ", QuoteUserText(text)));
    }
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

absl::StatusOr<Query> Query::Parse(absl::string_view query,
                                   const std::vector<absl::string_view>& allowed) {
  Query out;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    size_t equals = part.find('=');
    std::string raw_name(part.substr(0, equals));
    std::string raw_value(equals == absl::string_view::npos ? "" : part.substr(equals + 1));
    std::replace(raw_name.begin(), raw_name.end(), '+', ' ');
    std::replace(raw_value.begin(), raw_value.end(), '+', ' ');
    absl::StatusOr<std::string> name = PercentDecode(raw_name);
    if (!name.ok()) return name.status();
    if (name->empty()) return absl::InvalidArgumentError("query: a parameter without a name");
    if (std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
      return absl::InvalidArgumentError(absl::StrCat("query: unknown parameter ",
                                                     QuoteUserText(*name), "; this path takes ",
                                                     absl::StrJoin(allowed, ", ")));
    }
    absl::StatusOr<std::string> value = PercentDecode(raw_value);
    if (!value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter ", *name, ": ", value.status().message()));
    }
    if (std::any_of(value->begin(), value->end(),
                    [](char c) { return absl::ascii_iscntrl(static_cast<unsigned char>(c)); })) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter ", *name, ": a control character"));
    }
    out.parameters_.emplace_back(*std::move(name), *std::move(value));
  }
  return out;
}

std::string Query::Get(absl::string_view name) const {
  for (auto it = parameters_.rbegin(); it != parameters_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return "";
}

std::vector<std::string> Query::GetAll(absl::string_view name) const {
  std::vector<std::string> values;
  for (const auto& [key, value] : parameters_) {
    if (key == name) values.push_back(value);
  }
  return values;
}

absl::StatusOr<bool> Query::GetBool(absl::string_view name) const {
  std::string value = Get(name);
  if (value.empty() || value == "false" || value == "0") return false;
  if (value == "true" || value == "1") return true;
  return absl::InvalidArgumentError(
      absl::StrCat("query parameter ", name, ": want true or false, got ", QuoteUserText(value)));
}

absl::StatusOr<int64_t> Query::GetInt(absl::string_view name, int64_t max) const {
  std::string value = Get(name);
  if (value.empty()) return 0;
  int64_t number = 0;
  if (!absl::SimpleAtoi(value, &number) || number < 0 || number > max) {
    return absl::InvalidArgumentError(absl::StrCat("query parameter ", name,
                                                   ": want an integer from 0 to ", max, ", got ",
                                                   QuoteUserText(value)));
  }
  return number;
}

}  // namespace wm::web
