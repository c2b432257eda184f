#include "server/common/json_path.h"

#include "absl/strings/str_cat.h"

namespace wm {

absl::Status SetPath(Json& document, const Json& path, Json value) {
  if (!path.is_array()) return absl::InvalidArgumentError("path must be an array");
  Json* current = &document;
  for (const Json& step : path) {
    if (step.is_string()) {
      if (current->is_null()) *current = Json::object();
      if (!current->is_object()) {
        return absl::InvalidArgumentError(absl::StrCat("cannot index ", current->type_name(),
                                                       " with \"", step.get<std::string>(),
                                                       "\" at ", JqPathString(path)));
      }
      current = &(*current)[step.get<std::string>()];
    } else if (step.is_number()) {
      if (current->is_null()) *current = Json::array();
      if (!current->is_array()) {
        return absl::InvalidArgumentError(absl::StrCat("cannot index ", current->type_name(),
                                                       " with a number at ", JqPathString(path)));
      }
      int64_t index = static_cast<int64_t>(step.get<double>());
      if (index < 0) index += static_cast<int64_t>(current->size());
      if (index < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("out of bounds negative array index at ", JqPathString(path)));
      }
      while (current->size() <= static_cast<size_t>(index)) current->push_back(nullptr);
      current = &(*current)[static_cast<size_t>(index)];
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unsupported path step ", step.dump(), " (slices cannot be written)"));
    }
  }
  *current = std::move(value);
  return absl::OkStatus();
}

const Json* Find(const Json& document, std::initializer_list<absl::string_view> keys) {
  const Json* current = &document;
  for (absl::string_view key : keys) {
    if (!current->is_object()) return nullptr;
    current = FindMember(*current, key);
    if (current == nullptr) return nullptr;
  }
  return current;
}

std::string FindString(const Json& document, std::initializer_list<absl::string_view> keys) {
  return FindOptionalString(document, keys).value_or("");
}

absl::string_view FindStringView(const Json& document,
                                 std::initializer_list<absl::string_view> keys) {
  return StringViewOf(Find(document, keys));
}

std::optional<std::string> FindOptionalString(const Json& document,
                                              std::initializer_list<absl::string_view> keys) {
  const Json* value = Find(document, keys);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

std::vector<std::string> StringsOf(const Json* array) {
  std::vector<std::string> out;
  if (array == nullptr || !array->is_array()) return out;
  for (const Json& item : *array) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

std::string JqPathString(const Json& path) {
  std::string out;
  for (const Json& step : path) {
    if (step.is_string()) {
      absl::StrAppend(&out, ".", step.get<std::string>());
    } else {
      absl::StrAppend(&out, "[", step.dump(), "]");
    }
  }
  return out.empty() ? "." : out;
}

}  // namespace wm
