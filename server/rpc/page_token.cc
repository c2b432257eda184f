#include "server/rpc/page_token.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace wm::rpc {
namespace {

constexpr absl::string_view kVersion = "v1";

uint64_t Checksum(absl::string_view key) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&](absl::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
  };
  mix("workloadmap.v1.ListWorkloads page token ");
  mix(kVersion);
  mix(absl::string_view("\0", 1));
  mix(key);
  return h;
}

absl::Status NotIssued(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "page_token is not one this server issued (", why,
      "); pass the next_page_token of the previous page unchanged, or none for the first page"));
}

}  // namespace

std::string EncodePageToken(absl::string_view key) {
  return absl::StrCat(kVersion, ".", absl::WebSafeBase64Escape(key), ".",
                      absl::StrFormat("%016x", Checksum(key)));
}

absl::StatusOr<std::string> DecodePageToken(absl::string_view token) {
  if (token.size() > kMaxPageTokenBytes) {
    return NotIssued(absl::StrCat("it has ", token.size(), " bytes, more than the ",
                                  kMaxPageTokenBytes, " a token may have"));
  }
  std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  if (parts.size() != 3 || parts[0] != kVersion) return NotIssued("not a v1 token");
  std::string key;
  uint64_t checksum = 0;
  if (parts[1].empty() || !absl::WebSafeBase64Unescape(parts[1], &key) || parts[2].size() != 16 ||
      !absl::SimpleHexAtoi(parts[2], &checksum) || checksum != Checksum(key)) {
    return NotIssued("its checksum does not match");
  }
  return key;
}

}  // namespace wm::rpc
