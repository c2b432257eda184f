#include "server/expressions/native/paths.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/expressions/native/json_text.h"
#include "server/expressions/native/operators.h"

namespace wm::expressions::native {
namespace {

bool IsSlice(const Json& key) { return key.is_object(); }

absl::Status KeyError(const Json& target, const Json& key) {
  if (key.is_string()) {
    return absl::InvalidArgumentError("expected an object but got: " + TypePreview(target));
  }
  if (key.is_number() || IsSlice(key)) {
    return absl::InvalidArgumentError("expected an array but got: " + TypePreview(target));
  }
  if (target.is_array()) {
    return absl::InvalidArgumentError("expected a number for indexing an array but got: " +
                                      TypePreview(key));
  }
  return absl::InvalidArgumentError("expected a string for object key but got: " +
                                    TypePreview(key));
}

// The [start, end) of a slice key over an array of `length`.
absl::Status SliceBounds(const Json& key, size_t length, size_t& start, size_t& end) {
  auto bound = [&](const char* name, int64_t fallback, int64_t minimum, int64_t& out) {
    auto it = key.find(name);
    if (it == key.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected \"start\" and \"end\" for slicing but got: ", TypePreview(key)));
    }
    if (it->is_null()) {
      out = fallback;
      return absl::OkStatus();
    }
    if (!it->is_number()) {
      return absl::InvalidArgumentError("expected a number for indexing an array but got: " +
                                        TypePreview(*it));
    }
    int64_t i = it->is_number_float() && std::string(name) == "end"
                    ? ToInt(Json(std::ceil(it->get<double>())))
                    : ToInt(*it);
    auto n = static_cast<int64_t>(length);
    if (i < 0) i += n;
    out = std::clamp<int64_t>(i, minimum, n);
    return absl::OkStatus();
  };
  int64_t s = 0, e = 0;
  if (auto status = bound("start", 0, 0, s); !status.ok()) return status;
  if (auto status = bound("end", static_cast<int64_t>(length), s, e); !status.ok()) return status;
  start = static_cast<size_t>(s);
  end = static_cast<size_t>(e);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Json> GetPath(const Json& root, const Json& path) {
  static const Json* const kNull = new Json(nullptr);
  const Json* current = &root;
  Json slice_holder;
  // As gojq's getpath: each key indexes the value so far as `.[key]` would,
  // null included (null stays null for the keys that index, and fails for
  // the others: `getpath(["a", null])` fails where "a" is missing).
  for (const Json& key : path) {
    if (current->is_null()) {
      if (key.is_string() || key.is_number() || key.is_array() || key.is_object()) continue;
      return KeyError(*current, key);
    }
    if (!current->is_structured()) {
      return absl::FailedPreconditionError("a path steps into " + TypePreview(*current));
    }
    if (key.is_string() && current->is_object()) {
      auto it = current->find(key.get_ref<const std::string&>());
      current = it == current->end() ? kNull : &*it;
    } else if (key.is_number() && current->is_array()) {
      int64_t i = ToInt(key);
      auto n = static_cast<int64_t>(current->size());
      if (i < 0) i += n;
      current = i < 0 || i >= n ? kNull : &(*current)[static_cast<size_t>(i)];
    } else if (key.is_array() && current->is_array()) {
      // The positions where `key` occurs, as `.[key]` gives them.
      Json positions = Json::array();
      if (!key.empty() && key.size() <= current->size()) {
        for (size_t i = 0; i + key.size() <= current->size(); ++i) {
          bool match = true;
          for (size_t j = 0; j < key.size() && match; ++j) match = Equal((*current)[i + j], key[j]);
          if (match) positions.push_back(static_cast<int64_t>(i));
        }
      }
      slice_holder = std::move(positions);
      current = &slice_holder;
    } else if (IsSlice(key) && current->is_array()) {
      size_t start = 0, end = 0;
      if (auto status = SliceBounds(key, current->size(), start, end); !status.ok()) return status;
      slice_holder = Json(current->begin() + start, current->begin() + end);
      current = &slice_holder;
    } else {
      return KeyError(*current, key);
    }
  }
  return *current;
}

absl::Status SetPath(Json& root, const Json& path, Json value, int64_t max_array_index) {
  Json* current = &root;
  for (size_t k = 0; k < path.size(); ++k) {
    const Json& key = path[k];
    bool last = k + 1 == path.size();
    if (key.is_string()) {
      if (current->is_null()) *current = Json::object();
      if (!current->is_object()) return KeyError(*current, key);
      current = &(*current)[key.get<std::string>()];
    } else if (key.is_number()) {
      if (current->is_null()) *current = Json::array();
      if (!current->is_array()) return KeyError(*current, key);
      int64_t i = ToInt(key);
      auto n = static_cast<int64_t>(current->size());
      if (i < 0) {
        i += n;
        if (i < 0) {
          return absl::InvalidArgumentError("array index should not be negative: " + Preview(key));
        }
      }
      if (i > max_array_index) {
        return absl::InvalidArgumentError("array index too large: " + Preview(key));
      }
      while (static_cast<int64_t>(current->size()) <= i) current->push_back(nullptr);
      current = &(*current)[static_cast<size_t>(i)];
    } else if (IsSlice(key)) {
      if (current->is_null()) *current = Json::array();
      if (!current->is_array()) return KeyError(*current, key);
      size_t start = 0, end = 0;
      if (auto status = SliceBounds(key, current->size(), start, end); !status.ok()) return status;
      if (!last) {
        return absl::InvalidArgumentError("a slice must be the last key of a path to set");
      }
      if (!value.is_array()) {
        return absl::InvalidArgumentError("expected an array but got: " + TypePreview(value));
      }
      Json out(current->begin(), current->begin() + start);
      out.insert(out.end(), value.begin(), value.end());
      out.insert(out.end(), current->begin() + end, current->end());
      *current = std::move(out);
      return absl::OkStatus();
    } else {
      return KeyError(*current, key);
    }
  }
  *current = std::move(value);
  return absl::OkStatus();
}

absl::Status DeletePaths(Json& root, const Json& paths) {
  std::vector<const Json*> sorted;
  for (const Json& path : paths) {
    if (!path.is_array()) {
      return absl::InvalidArgumentError("expected an array but got: " + TypePreview(path));
    }
    sorted.push_back(&path);
  }
  // Greatest first: deleting [1] before [0] keeps [0] meaning the same.
  std::sort(sorted.begin(), sorted.end(),
            [](const Json* a, const Json* b) { return Compare(*a, *b) > 0; });
  for (const Json* path : sorted) {
    if (path->empty()) {
      root = nullptr;
      continue;
    }
    Json parent_path(path->begin(), path->end() - 1);
    // Walk to the parent; a missing parent means nothing to delete.
    Json* current = &root;
    bool missing = false;
    for (const Json& key : parent_path) {
      if (current->is_null()) {
        missing = true;
        break;
      }
      if (key.is_string() && current->is_object()) {
        auto it = current->find(key.get_ref<const std::string&>());
        if (it == current->end()) {
          missing = true;
          break;
        }
        current = &*it;
      } else if (key.is_number() && current->is_array()) {
        int64_t i = ToInt(key);
        auto n = static_cast<int64_t>(current->size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) {
          missing = true;
          break;
        }
        current = &(*current)[static_cast<size_t>(i)];
      } else {
        return KeyError(*current, key);
      }
    }
    if (missing || current->is_null()) continue;
    const Json& key = path->back();
    if (key.is_string() && current->is_object()) {
      current->erase(key.get<std::string>());
    } else if (key.is_number() && current->is_array()) {
      int64_t i = ToInt(key);
      auto n = static_cast<int64_t>(current->size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) current->erase(static_cast<size_t>(i));
    } else if (IsSlice(key) && current->is_array()) {
      size_t start = 0, end = 0;
      if (auto status = SliceBounds(key, current->size(), start, end); !status.ok()) return status;
      current->erase(current->begin() + start, current->begin() + end);
    } else {
      return KeyError(*current, key);
    }
  }
  return absl::OkStatus();
}

}  // namespace wm::expressions::native
