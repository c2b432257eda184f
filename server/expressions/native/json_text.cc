#include "server/expressions/native/json_text.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "server/common/json_string.h"

namespace wm::expressions::native {
namespace {

void AppendDouble(double f, std::string& out) {
  if (std::isnan(f)) {
    out += "null";
    return;
  }
  constexpr double kMax = std::numeric_limits<double>::max();
  if (f > kMax) f = kMax;
  if (f < -kMax) f = -kMax;
  double magnitude = std::fabs(f);
  bool exponent = magnitude != 0 && (magnitude < 1e-6 || magnitude >= 1e21);
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), f,
                              exponent ? std::chars_format::scientific : std::chars_format::fixed);
  size_t n = result.ptr - buffer;
  // Like Go's strconv, to_chars pads the exponent to two digits; gojq
  // unpads a negative one ("e-09" -> "e-9").
  if (exponent && n >= 4 && buffer[n - 4] == 'e' && buffer[n - 3] == '-' && buffer[n - 2] == '0') {
    buffer[n - 2] = buffer[n - 1];
    --n;
  }
  out.append(buffer, n);
}

}  // namespace

const char* TypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
    case Json::value_t::binary:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
  }
  return "null";
}

void AppendJsonText(const Json& value, std::string& out) {
  switch (value.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
    case Json::value_t::binary:
      out += "null";
      return;
    case Json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer: {
      char buffer[24];
      auto result = std::to_chars(buffer, buffer + sizeof(buffer), value.get<int64_t>());
      out.append(buffer, result.ptr - buffer);
      return;
    }
    case Json::value_t::number_unsigned: {
      char buffer[24];
      auto result = std::to_chars(buffer, buffer + sizeof(buffer), value.get<uint64_t>());
      out.append(buffer, result.ptr - buffer);
      return;
    }
    case Json::value_t::number_float:
      AppendDouble(value.get<double>(), out);
      return;
    case Json::value_t::string:
      AppendJsonString(value.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const Json& element : value) {
        if (!first) out.push_back(',');
        first = false;
        AppendJsonText(element, out);
      }
      out.push_back(']');
      return;
    }
    case Json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, member] : value.items()) {
        if (!first) out.push_back(',');
        first = false;
        AppendJsonString(key, out);
        out.push_back(':');
        AppendJsonText(member, out);
      }
      out.push_back('}');
      return;
    }
  }
}

std::string JsonText(const Json& value) {
  std::string out;
  AppendJsonText(value, out);
  return out;
}

std::string Preview(const Json& value) {
  // gojq encodes into a 32-byte buffer and stops there; encoding a bounded
  // prefix matters for huge values, so large containers are cut before
  // encoding: no element past the 32nd byte can show.
  constexpr size_t kLimit = 30;
  std::string text;
  if (value.is_array() && value.size() > 32) {
    Json head = Json::array();
    for (size_t i = 0; i < 32; ++i) head.push_back(value[i]);
    AppendJsonText(head, text);
  } else if (value.is_object() && value.size() > 32) {
    Json head = Json::object();
    size_t n = 0;
    for (const auto& [key, member] : value.items()) {
      if (n++ == 32) break;
      head[key] = member;
    }
    AppendJsonText(head, text);
  } else {
    AppendJsonText(value, text);
  }
  // gojq's limited writer stops when its 32-byte buffer is full.
  if (text.size() > 32) text.resize(32);
  if (text.size() <= kLimit) return text;
  const char* trailing = value.is_string()   ? " ...\""
                         : value.is_array()  ? " ...]"
                         : value.is_object() ? " ...}"
                                             : " ...";
  size_t keep = kLimit - std::char_traits<char>::length(trailing);
  // Drop the last rune until it fits, as Go's utf8.DecodeLastRune does: a
  // whole sequence when the bytes end in one, else a single byte.
  while (text.size() > keep) {
    size_t start = text.size() - 1;
    while (start > 0 && text.size() - start < 4 &&
           (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) {
      --start;
    }
    bool whole = static_cast<unsigned char>(text[start]) >= 0x80 &&
                 Utf8SequenceLength(text, start) == text.size() - start;
    text.resize(whole ? start : text.size() - 1);
  }
  return text + trailing;
}

std::string TypePreview(const Json& value) {
  if (value.is_null()) return "null";
  return std::string(TypeName(value)) + " (" + Preview(value) + ")";
}

}  // namespace wm::expressions::native
