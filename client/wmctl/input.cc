#include "client/wmctl/input.h"

#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/common/file.h"
#include "server/common/json_reader.h"
#include "server/common/yaml_json.h"

namespace wm::wmctl {

absl::StatusOr<std::string> ReadInput(const std::string& path, std::istream& in) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(in), {});
  absl::StatusOr<std::string> text = ReadFileToString(path, kMaxInputBytes);
  if (!text.ok()) return FileErrorAs(text.status(), "cannot read", path);
  return text;
}

absl::StatusOr<std::vector<Json>> ReadDocuments(absl::string_view text) {
  absl::string_view start = absl::StripLeadingAsciiWhitespace(text);
  if (start.empty() || (start.front() != '{' && start.front() != '[')) {
    return ParseYamlDocuments(text);
  }
  auto document = ParseJson(text);
  if (document.ok()) return std::vector<Json>{*std::move(document)};
  auto yaml = ParseYamlDocuments(text);
  if (yaml.ok()) return yaml;
  return document.status();
}

}  // namespace wm::wmctl
