#ifndef WM_SERVER_EXPRESSIONS_NATIVE_UTF8_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_UTF8_H_

// jq counts strings in characters (code points), our strings are UTF-8
// bytes: the conversions between the two, each one pass over the bytes.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace wm::expressions::native {

inline bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The number of characters of `s`: `length` of a string.
inline int64_t CharacterCount(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += !IsContinuationByte(c);
  return n;
}

// The byte offset of character `n` of `s` (s.size() past the end).
inline size_t CharacterOffset(std::string_view s, int64_t n) {
  size_t i = 0;
  while (i < s.size() && n > 0) {
    ++i;
    while (i < s.size() && IsContinuationByte(s[i])) ++i;
    --n;
  }
  return i;
}

// The characters of `s` before byte offsets asked for in increasing order,
// counted in one pass over the string in all (match and indices report
// offsets in characters; counting from the start for each is quadratic).
class CharacterCounter {
 public:
  explicit CharacterCounter(std::string_view s) : s_(s) {}
  // REQUIRES: `byte` is at least every earlier argument and at most
  // s.size().
  int64_t At(size_t byte) {
    for (; byte_ < byte; ++byte_) characters_ += !IsContinuationByte(s_[byte_]);
    return characters_;
  }

 private:
  std::string_view s_;
  size_t byte_ = 0;
  int64_t characters_ = 0;
};

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_UTF8_H_
