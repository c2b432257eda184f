#ifndef WM_SERVER_COMMON_TESTING_TYPED_TEXT_H_
#define WM_SERVER_COMMON_TESTING_TYPED_TEXT_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "server/common/json.h"

namespace wm::testing {

// The tree's text with each number's type: two trees are the same, number
// types included, when their typed texts are equal. nlohmann tells int64,
// uint64 and double apart, and code reading a tree may too. An integer
// zero is untyped: nlohmann types `-0` int64 and `0` uint64, simdjson
// cannot tell them apart (both are the number 0, and print alike;
// server/common/simdjson_tree.h). For ParseJson's tests and fuzzer, which
// hold it to nlohmann's own parser.
inline std::string TypedText(const Json& value) {
  if (value.is_number_integer() && value == 0) return "0";
  switch (value.type()) {
    case Json::value_t::object: {
      std::string out = "{";
      for (const auto& [key, member] : value.items()) {
        absl::StrAppend(&out, Json(key).dump(), ":", TypedText(member), ",");
      }
      return out + "}";
    }
    case Json::value_t::array: {
      std::string out = "[";
      for (const Json& item : value) absl::StrAppend(&out, TypedText(item), ",");
      return out + "]";
    }
    case Json::value_t::number_integer:
      return "i" + value.dump();
    case Json::value_t::number_unsigned:
      return "u" + value.dump();
    case Json::value_t::number_float:
      return "f" + value.dump();
    default:
      return value.dump();
  }
}

}  // namespace wm::testing

#endif  // WM_SERVER_COMMON_TESTING_TYPED_TEXT_H_
