#include "server/expressions/native/format.h"

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "server/expressions/native/json_text.h"

namespace wm::expressions::native {
namespace {

std::string UriEscape(absl::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

// @csv, @tsv and @sh: an array of scalars joined (gojq's formatJoin).
absl::StatusOr<std::string> Join(absl::string_view type, const Json& value,
                                 absl::string_view separator,
                                 std::string (*escape)(absl::string_view)) {
  if (!value.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("@", type, " cannot be applied to: ", TypePreview(value)));
  }
  std::vector<std::string> pieces;
  for (const Json& element : value) {
    if (element.is_structured()) {
      return absl::InvalidArgumentError(
          absl::StrCat("@", type, " cannot format an array including: ", TypePreview(element)));
    }
    if (element.is_string()) {
      pieces.push_back(escape(element.get_ref<const std::string&>()));
    } else if (!element.is_null() || type == "sh") {
      pieces.push_back(JsonText(element));
    } else {
      pieces.emplace_back();
    }
  }
  return absl::StrJoin(pieces, separator);
}

std::string CsvEscape(absl::string_view s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\"", "\"\""}, {std::string(1, '\0'), "\\0"}}),
                      "\"");
}

std::string TsvEscape(absl::string_view s) {
  return absl::StrReplaceAll(
      s,
      {{"\t", "\\t"}, {"\r", "\\r"}, {"\n", "\\n"}, {"\\", "\\\\"}, {std::string(1, '\0'), "\\0"}});
}

std::string ShEscape(absl::string_view s) {
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}, {std::string(1, '\0'), "\\0"}}),
                      "'");
}

}  // namespace

std::string ToText(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  return JsonText(value);
}

bool IsKnownFormat(absl::string_view name) {
  return name == "@text" || name == "@json" || name == "@base64" || name == "@base64d" ||
         name == "@uri" || name == "@html" || name == "@csv" || name == "@tsv" || name == "@sh";
}

absl::StatusOr<std::string> ApplyFormat(absl::string_view name, const Json& value) {
  if (name == "@text") return ToText(value);
  if (name == "@json") return JsonText(value);
  if (name == "@base64") return absl::Base64Escape(ToText(value));
  if (name == "@base64d") {
    std::string text = ToText(value);
    if (size_t pad = text.find('='); pad != std::string::npos) text.resize(pad);
    std::string decoded;
    if (!absl::Base64Unescape(text, &decoded)) {
      return absl::InvalidArgumentError(
          absl::StrCat("@base64d cannot be applied to ", Preview(value), ": illegal base64 data"));
    }
    return decoded;
  }
  if (name == "@uri") return UriEscape(ToText(value));
  if (name == "@html") {
    return absl::StrReplaceAll(
        ToText(value),
        {{"<", "&lt;"}, {">", "&gt;"}, {"&", "&amp;"}, {"'", "&#39;"}, {"\"", "&quot;"}});
  }
  if (name == "@csv") return Join("csv", value, ",", CsvEscape);
  if (name == "@tsv") return Join("tsv", value, "\t", TsvEscape);
  if (name == "@sh") {
    if (value.is_array()) return Join("sh", value, " ", ShEscape);
    return Join("sh", Json::array({value}), " ", ShEscape);
  }
  return absl::InvalidArgumentError(absl::StrCat("format not defined: ", name));
}

}  // namespace wm::expressions::native
