#include "server/common/openapi_schema.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wm {
namespace {

bool IsIdentifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

std::string TypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    default:
      return "object";
  }
}

bool MatchesType(const std::string& type, const Json& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") {
    return v.is_number_integer() ||
           (v.is_number_float() && v.get<double>() == static_cast<int64_t>(v.get<double>()));
  }
  if (type == "number") return v.is_number();
  return true;
}

void Add(std::vector<Finding>& findings, Finding::Severity severity, const std::string& path,
         std::string message) {
  findings.push_back({severity, path, std::move(message)});
}

}  // namespace

std::string Finding::ToString() const {
  std::string text = path.empty() ? message : absl::StrCat(path, ": ", message);
  return severity == Severity::kWarning ? absl::StrCat("warning: ", text) : text;
}

std::string FieldPath(const std::string& parent, const std::string& field) {
  if (!IsIdentifier(field)) return absl::StrCat(parent, "[", Json(field).dump(), "]");
  return parent.empty() ? field : absl::StrCat(parent, ".", field);
}

std::string IndexPath(const std::string& parent, size_t index) {
  return absl::StrCat(parent, "[", index, "]");
}

void ValidateAgainstSchema(const Json& schema, Json& value, const std::string& path,
                           std::vector<Finding>& findings) {
  using S = Finding::Severity;
  // The API server drops nulls of non-nullable fields: a null is as good
  // as absent (required checks happen in the parent).
  if (value.is_null()) return;
  if (schema.value("x-kubernetes-int-or-string", false)) {
    if (!value.is_string() && !value.is_number_integer()) {
      Add(findings, S::kError, path,
          absl::StrCat("must be an integer or a string, not ", TypeName(value)));
    }
    return;
  }
  std::string type = schema.value("type", "");
  if (!type.empty() && !MatchesType(type, value)) {
    Add(findings, S::kError, path, absl::StrCat("must be ", type, ", not ", TypeName(value)));
    return;
  }
  if (auto it = schema.find("enum"); it != schema.end() && it->is_array()) {
    bool found = false;
    for (const auto& allowed : *it) found = found || allowed == value;
    if (!found) {
      std::vector<std::string> names;
      for (const auto& allowed : *it) names.push_back(allowed.dump());
      Add(findings, S::kError, path,
          absl::StrCat("unsupported value ", value.dump(), ": must be one of ",
                       absl::StrJoin(names, ", ")));
    }
  }
  if (value.is_string()) {
    size_t length = value.get_ref<const std::string&>().size();
    if (schema.contains("minLength") && length < schema["minLength"].get<size_t>()) {
      Add(findings, S::kError, path,
          absl::StrCat("must be at least ", schema["minLength"].get<size_t>(),
                       " character(s) long"));
    }
    if (schema.contains("maxLength") && length > schema["maxLength"].get<size_t>()) {
      Add(findings, S::kError, path,
          absl::StrCat("must be at most ", schema["maxLength"].get<size_t>(), " characters long"));
    }
  }
  if (value.is_array()) {
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<size_t>()) {
      Add(findings, S::kError, path,
          absl::StrCat("must have at least ", schema["minItems"].get<size_t>(), " item(s)"));
    }
    if (schema.contains("maxItems") && value.size() > schema["maxItems"].get<size_t>()) {
      Add(findings, S::kError, path,
          absl::StrCat("must have at most ", schema["maxItems"].get<size_t>(), " item(s)"));
    }
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < value.size(); ++i) {
        ValidateAgainstSchema(*items, value[i], IndexPath(path, i), findings);
      }
    }
    std::string list_type = schema.value("x-kubernetes-list-type", "");
    if (list_type == "map" && schema.contains("x-kubernetes-list-map-keys")) {
      std::set<std::string> seen;
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_object()) continue;
        Json key = Json::array();
        for (const auto& k : schema["x-kubernetes-list-map-keys"]) {
          key.push_back(value[i].value(k.get<std::string>(), Json()));
        }
        if (!seen.insert(key.dump()).second) {
          Add(findings, S::kError, IndexPath(path, i),
              absl::StrCat("duplicate entry for key ", key.dump()));
        }
      }
    } else if (list_type == "set") {
      std::set<std::string> seen;
      for (size_t i = 0; i < value.size(); ++i) {
        if (!seen.insert(value[i].dump()).second) {
          Add(findings, S::kError, IndexPath(path, i),
              absl::StrCat("duplicate value ", value[i].dump()));
        }
      }
    }
  }
  if (value.is_object()) {
    if (schema.contains("minProperties") && value.size() < schema["minProperties"].get<size_t>()) {
      Add(findings, S::kError, path,
          absl::StrCat("must have at least ", schema["minProperties"].get<size_t>(), " entr",
                       schema["minProperties"].get<size_t>() == 1 ? "y" : "ies"));
    }
    const Json* properties = nullptr;
    if (auto it = schema.find("properties"); it != schema.end()) properties = &*it;
    if (properties != nullptr) {
      // Defaults first, so required checks see them (as the API server does).
      for (const auto& [name, sub] : properties->items()) {
        if (!value.contains(name) && sub.contains("default")) value[name] = sub["default"];
      }
    }
    if (auto it = schema.find("required"); it != schema.end()) {
      for (const auto& name : *it) {
        const std::string& field = name.get_ref<const std::string&>();
        if (!value.contains(field) || value[field].is_null()) {
          Add(findings, S::kError, FieldPath(path, field), "required value");
        }
      }
    }
    const Json* additional = nullptr;
    if (auto it = schema.find("additionalProperties"); it != schema.end() && it->is_object()) {
      additional = &*it;
    }
    bool preserve = schema.value("x-kubernetes-preserve-unknown-fields", false);
    for (auto& [name, sub] : value.items()) {
      // The root's metadata is ObjectMeta, which the API server checks
      // itself; CRD schemas only say `type: object` for it.
      if (path.empty() && name == "metadata") continue;
      std::string sub_path = FieldPath(path, name);
      if (properties != nullptr && properties->contains(name)) {
        ValidateAgainstSchema((*properties)[name], sub, sub_path, findings);
      } else if (additional != nullptr) {
        ValidateAgainstSchema(*additional, sub, sub_path, findings);
      } else if (!preserve && (properties != nullptr || type == "object")) {
        Add(findings, S::kWarning, sub_path, "unknown field (the API server would drop it)");
      }
    }
  }
}

}  // namespace wm
