#include "server/common/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace wm {
namespace {

// Types a plain (unquoted, untagged) scalar by the YAML 1.2 core schema.
Json ResolvePlainScalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    return nullptr;
  }
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kOct("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  static const std::regex kInf("[-+]?\\.(inf|Inf|INF)");
  static const std::regex kNan("\\.(nan|NaN|NAN)");
  if (std::regex_match(s, kInt)) {
    int64_t v;
    if (absl::SimpleAtoi(s, &v)) return v;
    double d;
    if (absl::SimpleAtod(s, &d)) return d;
  }
  if (std::regex_match(s, kOct)) {
    return static_cast<int64_t>(std::stoll(s.substr(2), nullptr, 8));
  }
  if (std::regex_match(s, kHex)) {
    return static_cast<int64_t>(std::stoll(s.substr(2), nullptr, 16));
  }
  if (std::regex_match(s, kFloat)) {
    double d;
    if (absl::SimpleAtod(s, &d)) return d;
  }
  // JSON has no infinities or NaN; keep them as the text they were.
  if (std::regex_match(s, kInf) || std::regex_match(s, kNan)) return s;
  return s;
}

Json ToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& tag = node.Tag();
      const std::string& text = node.Scalar();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return text;
      return ResolvePlainScalar(text);
    }
    case YAML::NodeType::Sequence: {
      Json array = Json::array();
      for (const auto& item : node) array.push_back(ToJson(item));
      return array;
    }
    case YAML::NodeType::Map: {
      Json object = Json::object();
      for (const auto& entry : node) {
        object[entry.first.as<std::string>()] = ToJson(entry.second);
      }
      return object;
    }
  }
  return nullptr;
}

void Emit(YAML::Emitter& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      return;
    case Json::value_t::array:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& item : value) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case Json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      // A string that would read back as another type must be quoted.
      if (!ResolvePlainScalar(s).is_string()) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      return;
    }
    case Json::value_t::null:
      out << YAML::Null;
      return;
    default:
      out << value.dump();
      return;
  }
}

}  // namespace

absl::StatusOr<std::vector<Json>> ParseYamlDocuments(absl::string_view text) {
  std::vector<Json> documents;
  try {
    for (const YAML::Node& node : YAML::LoadAll(std::string(text))) {
      if (node.IsNull() || !node.IsDefined()) continue;
      documents.push_back(ToJson(node));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("YAML parse error at line ", e.mark.line + 1,
                                                   ", column ", e.mark.column + 1, ": ", e.msg));
  }
  return documents;
}

absl::StatusOr<std::vector<Json>> ReadYamlFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto documents = ParseYamlDocuments(buffer.str());
  if (!documents.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", documents.status().message()));
  }
  return documents;
}

std::string ToYaml(const Json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace wm
