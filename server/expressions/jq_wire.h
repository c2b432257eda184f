#ifndef WM_SERVER_EXPRESSIONS_JQ_WIRE_H_
#define WM_SERVER_EXPRESSIONS_JQ_WIRE_H_

// The framing between the daemon and its jq worker processes: a stream of
// messages over a socketpair, each field a little-endian u32 or a
// length-prefixed byte string. The parent writes requests, the worker answers
// those that need an answer, in order.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace wm::expressions::wire {

enum Op : uint8_t {
  // u32 program, str source -> u8 ok, str error
  kCompile = 'C',
  // str source -> u8 ok, str error (compile check, nothing kept)
  kCheck = 'K',
  // u32 program (no answer)
  kFree = 'F',
  // u32 slot, str json (no answer)
  kLoad = 'L',
  // (no answer) drops every loaded input
  kClearInputs = 'X',
  // u32 program, u32 index, u32 slot, u32 max_outputs, u32 max_bytes
  //   -> u8 ok, then (ok) u32 n, n x str json | (error) str message
  kEvaluate = 'E',
};

// A worker's exit status when an allocation failed: it ran into its
// address-space limit (libjq's and C++'s out-of-memory handlers both exit
// with it), as opposed to a crash or a protocol error.
inline constexpr int kExitMemoryExhausted = 86;

// Longest error message a worker sends (compile or evaluation; longer ones
// are cut). Messages end up in gRPC statuses, which travel in trailers
// that clients accept up to 8 KiB by default; and `error("x" * 1e7)` must
// not ship megabytes.
inline constexpr size_t kMaxErrorBytes = 4096;

inline void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline void PutStr(std::string& out, absl::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s.data(), s.size());
}
inline uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

}  // namespace wm::expressions::wire

#endif  // WM_SERVER_EXPRESSIONS_JQ_WIRE_H_
