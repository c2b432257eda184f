#include "server/common/json_string.h"

namespace wm {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  unsigned char c = s[i];
  size_t length;
  unsigned char low = 0x80, high = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  unsigned char second = s[i + 1];
  if (second < low || second > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    unsigned char next = s[i + k];
    if (next < 0x80 || next > 0xBF) return 0;
  }
  return length;
}

void AppendJsonString(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t start = 0;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char b = s[i];
    if (b < 0x80) {
      if (b >= ' ' && b <= '~' && b != '"' && b != '\\') {
        ++i;
        continue;
      }
      out.append(s.data() + start, i - start);
      switch (b) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          out += "\\u00";
          out.push_back(kHex[b >> 4]);
          out.push_back(kHex[b & 0xF]);
      }
      start = ++i;
      continue;
    }
    size_t length = Utf8SequenceLength(s, i);
    if (length == 0) {
      out.append(s.data() + start, i - start);
      out += "\\ufffd";
      start = ++i;
      continue;
    }
    i += length;
  }
  out.append(s.data() + start, s.size() - start);
  out.push_back('"');
}

}  // namespace wm
