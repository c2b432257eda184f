#include "server/expressions/native/operators.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_split.h"
#include "server/expressions/native/json_text.h"

namespace wm::expressions::native {
namespace {

int TypeIndex(const Json& v) {
  switch (v.type()) {
    case Json::value_t::boolean:
      return BoolOf(v) ? 2 : 1;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return 3;
    case Json::value_t::string:
      return 4;
    case Json::value_t::array:
      return 5;
    case Json::value_t::object:
      return 6;
    default:
      return 0;
  }
}

// Whether v is an int64 (uint64 values above INT64_MAX count as doubles).
bool IsInt(const Json& v) {
  if (v.is_number_unsigned()) return UnsignedOf(v) <= uint64_t{INT64_MAX};
  return v.is_number_integer();
}

int64_t AsInt(const Json& v) {
  return v.is_number_unsigned() ? static_cast<int64_t>(UnsignedOf(v)) : SignedOf(v);
}

int CompareDoubles(double l, double r) {
  if (l < r || std::isnan(l)) return -1;
  if (l == r) return 0;
  return 1;
}

absl::Status BinaryError(const char* name, const Json& l, const Json& r) {
  return absl::InvalidArgumentError(
      absl::StrCat("cannot ", name, ": ", TypePreview(l), " and ", TypePreview(r)));
}

// jq's `*` of two objects. REQUIRES: both are objects.
Json DeepMerge(const Json& l, const Json& r) {
  Json out = Json::object();
  out.get_ref<Json::object_t&>() = Json::object_t::Merged(
      l.get_ref<const Json::object_t&>(), r.get_ref<const Json::object_t&>(),
      [](Json& mine, const Json& theirs) {
        mine = mine.is_object() && theirs.is_object() ? DeepMerge(mine, theirs) : theirs;
      });
  return out;
}

}  // namespace

double ToDouble(const Json& value) {
  if (value.is_number_float()) return DoubleOf(value);
  if (value.is_number_unsigned()) return static_cast<double>(UnsignedOf(value));
  return static_cast<double>(SignedOf(value));
}

int64_t ToInt(const Json& value) {
  if (IsInt(value)) return AsInt(value);
  double x = ToDouble(value);
  if (x >= -9223372036854775808.0 && x < 9223372036854775808.0) return static_cast<int64_t>(x);
  return x > 0 ? INT64_MAX : INT64_MIN;
}

Json MakeNumber(double value) {
  if (value >= -9223372036854775808.0 && value < 9223372036854775808.0 &&
      value == std::trunc(value) && !(value == 0 && std::signbit(value))) {
    return Json(static_cast<int64_t>(value));
  }
  return Json(value);
}

int Compare(const Json& a, const Json& b) {
  int ta = TypeIndex(a), tb = TypeIndex(b);
  if (ta != tb) return ta < tb ? -1 : 1;
  switch (ta) {
    case 3:
      if (IsInt(a) && IsInt(b)) {
        int64_t x = AsInt(a), y = AsInt(b);
        return x < y ? -1 : (x > y ? 1 : 0);
      }
      return CompareDoubles(ToDouble(a), ToDouble(b));
    case 4: {
      int c = a.get_ptr<const std::string*>()->compare(*b.get_ptr<const std::string*>());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 5: {
      size_t n = std::min(a.size(), b.size());
      for (size_t i = 0; i < n; ++i) {
        if (int c = Compare(a[i], b[i]); c != 0) return c;
      }
      return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
    }
    case 6: {
      // Keys first, as sorted arrays of strings; then values in key order.
      auto ia = a.begin(), ib = b.begin();
      for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
        int c = ia.key().compare(ib.key());
        if (c != 0) return c < 0 ? -1 : 1;
      }
      if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
      for (ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
        if (int c = Compare(*ia, *ib); c != 0) return c;
      }
      return 0;
    }
    default:
      return 0;
  }
}

absl::StatusOr<Json> Add(const Json& l, const Json& r) {
  if (l.is_null()) return r;
  if (r.is_null()) return l;
  if (l.is_number() && r.is_number()) {
    if (IsInt(l) && IsInt(r)) {
      int64_t sum;
      if (!__builtin_add_overflow(AsInt(l), AsInt(r), &sum)) return Json(sum);
    }
    return MakeNumber(ToDouble(l) + ToDouble(r));
  }
  if (l.is_string() && r.is_string()) {
    return Json(l.get_ref<const std::string&>() + r.get_ref<const std::string&>());
  }
  if (l.is_array() && r.is_array()) {
    Json out = l;
    out.insert(out.end(), r.begin(), r.end());
    return out;
  }
  if (l.is_object() && r.is_object()) {
    Json out = Json::object();
    out.get_ref<Json::object_t&>() = Json::object_t::Merged(
        l.get_ref<const Json::object_t&>(), r.get_ref<const Json::object_t&>(),
        [](Json& mine, const Json& theirs) { mine = theirs; });
    return out;
  }
  return BinaryError("add", l, r);
}

absl::StatusOr<Json> Subtract(const Json& l, const Json& r) {
  if (l.is_number() && r.is_number()) {
    if (IsInt(l) && IsInt(r)) {
      int64_t difference;
      if (!__builtin_sub_overflow(AsInt(l), AsInt(r), &difference)) return Json(difference);
    }
    return MakeNumber(ToDouble(l) - ToDouble(r));
  }
  if (l.is_array() && r.is_array()) {
    Json out = Json::array();
    for (const Json& element : l) {
      bool removed = false;
      for (const Json& other : r) {
        if (Equal(element, other)) {
          removed = true;
          break;
        }
      }
      if (!removed) out.push_back(element);
    }
    return out;
  }
  return BinaryError("subtract", l, r);
}

size_t RepeatedStringBytes(const Json& l, const Json& r) {
  const Json* text = l.is_string() && r.is_number()   ? &l
                     : r.is_string() && l.is_number() ? &r
                                                      : nullptr;
  if (text == nullptr) return 0;
  double n = ToDouble(text == &l ? r : l);
  if (n < 0 || std::isnan(n)) return 0;
  auto copies = static_cast<uint64_t>(std::min(n, 2147483647.0));
  uint64_t bytes = text->get_ref<const std::string&>().size() * copies;
  return bytes >= 2147483647ull ? 0 : bytes;
}

absl::StatusOr<Json> Multiply(const Json& l, const Json& r) {
  if (l.is_number() && r.is_number()) {
    if (IsInt(l) && IsInt(r)) {
      int64_t product;
      if (!__builtin_mul_overflow(AsInt(l), AsInt(r), &product)) return Json(product);
    }
    return MakeNumber(ToDouble(l) * ToDouble(r));
  }
  if (l.is_object() && r.is_object()) return DeepMerge(l, r);
  const Json* text = l.is_string() && r.is_number()   ? &l
                     : r.is_string() && l.is_number() ? &r
                                                      : nullptr;
  if (text == nullptr) return BinaryError("multiply", l, r);
  double n = ToDouble(text == &l ? r : l);
  if (n < 0 || std::isnan(n)) return Json(nullptr);
  const std::string& s = text->get_ref<const std::string&>();
  double count = std::min(n, 2147483647.0);
  auto copies = static_cast<uint64_t>(count);
  if (s.size() * copies >= 2147483647ull) {
    return absl::InvalidArgumentError(absl::StrCat(
        "repeat string result too large: ", Preview(*text), " * ", Preview(MakeNumber(n))));
  }
  // An empty text (or no copy) is "" at once: counting 2^31 copies of
  // nothing one by one took seconds outside any bound (a fuzzer found it).
  const size_t size = s.size() * copies;
  if (size == 0) return Json(std::string());
  // Doubling: log2(copies) appends, not one per copy.
  std::string out;
  out.reserve(size);
  out = s;
  while (out.size() * 2 <= size) out.append(out.data(), out.size());
  out.append(out.data(), size - out.size());
  return Json(std::move(out));
}

absl::StatusOr<Json> Divide(const Json& l, const Json& r) {
  if (l.is_number() && r.is_number()) {
    if (IsInt(l) && IsInt(r)) {
      int64_t x = AsInt(l), y = AsInt(r);
      if (y == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot divide ", TypePreview(l), " by: ", TypePreview(r)));
      }
      if (y == -1 && x == INT64_MIN) return Json(-static_cast<double>(x));
      if (x % y == 0) return Json(x / y);
      return MakeNumber(static_cast<double>(x) / static_cast<double>(y));
    }
    double y = ToDouble(r);
    if (y == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot divide ", TypePreview(l), " by: ", TypePreview(r)));
    }
    return MakeNumber(ToDouble(l) / y);
  }
  if (l.is_string() && r.is_string()) {
    const std::string& s = l.get_ref<const std::string&>();
    Json out = Json::array();
    if (s.empty()) return out;
    const std::string& separator = r.get_ref<const std::string&>();
    if (separator.empty()) {
      // Go's strings.Split with an empty separator splits into UTF-8 runes.
      for (size_t i = 0; i < s.size();) {
        size_t length = 1;
        unsigned char c = s[i];
        if (c >= 0xF0) {
          length = 4;
        } else if (c >= 0xE0) {
          length = 3;
        } else if (c >= 0xC0) {
          length = 2;
        }
        length = std::min(length, s.size() - i);
        out.push_back(s.substr(i, length));
        i += length;
      }
      return out;
    }
    for (absl::string_view part : absl::StrSplit(s, separator)) out.push_back(std::string(part));
    return out;
  }
  return BinaryError("divide", l, r);
}

absl::StatusOr<Json> Modulo(const Json& l, const Json& r) {
  if (l.is_number() && r.is_number()) {
    if (!(IsInt(l) && IsInt(r)) && (std::isnan(ToDouble(l)) || std::isnan(ToDouble(r)))) {
      return Json(std::nan(""));
    }
    int64_t x = ToInt(l), y = ToInt(r);
    if (y == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot modulo ", TypePreview(l), " by: ", TypePreview(r)));
    }
    if (y == -1) return Json(int64_t{0});
    return Json(x % y);
  }
  return BinaryError("modulo", l, r);
}

absl::StatusOr<Json> Negate(const Json& v) {
  if (!v.is_number()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot negate: ", TypePreview(v)));
  }
  if (IsInt(v) && AsInt(v) != INT64_MIN) return Json(-AsInt(v));
  return Json(-ToDouble(v));
}

}  // namespace wm::expressions::native
