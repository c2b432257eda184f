#include "server/common/simdjson_tree.h"

#include <string>
#include <string_view>

namespace wm {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// False when nesting passes `levels_left`; recursion is bounded by the
// parser's own depth bound (simdjson::DEFAULT_MAX_DEPTH, 1024 levels).
bool Build(const element& value, size_t levels_left, Json& out) {
  switch (value.type()) {
    case element_type::OBJECT: {
      if (levels_left == 0) return false;
      out = Json::object();
      simdjson::dom::object fields(value);
      Json::object_t::Container members;
      members.reserve(fields.size());
      for (auto field : fields) {
        members.emplace_back(std::string(field.key), nullptr);
        if (!Build(field.value, levels_left - 1, members.back().second)) return false;
      }
      // One sort at most: Go's encoder writes maps (labels, resources) with
      // sorted keys, and then the members are taken as they are. A repeated
      // key keeps the last value, as nlohmann's parser does.
      out.get_ref<Json::object_t&>().AssignUnsorted(std::move(members));
      return true;
    }
    case element_type::ARRAY: {
      if (levels_left == 0) return false;
      out = Json::array();
      simdjson::dom::array items(value);
      auto& elements = out.get_ref<Json::array_t&>();
      elements.reserve(items.size());
      for (element item : items) {
        elements.emplace_back();
        if (!Build(item, levels_left - 1, elements.back())) return false;
      }
      return true;
    }
    case element_type::STRING:
      out = std::string(std::string_view(value));
      return true;
    case element_type::INT64: {
      int64_t number = int64_t(value);
      if (number >= 0) {
        out = static_cast<uint64_t>(number);
      } else {
        out = number;
      }
      return true;
    }
    case element_type::UINT64:
      out = uint64_t(value);
      return true;
    case element_type::DOUBLE:
      out = double(value);
      return true;
    case element_type::BOOL:
      out = bool(value);
      return true;
    case element_type::NULL_VALUE:
      out = nullptr;
      return true;
  }
  return true;
}

}  // namespace

std::optional<Json> JsonFromSimdjson(const element& value, size_t max_depth) {
  Json out;
  if (!Build(value, max_depth, out)) return std::nullopt;
  return out;
}

}  // namespace wm
