#ifndef WM_SERVER_RPC_PAGE_TOKEN_H_
#define WM_SERVER_RPC_PAGE_TOKEN_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm::rpc {

// ListWorkloads page tokens: the sort key of the last row of a page,
// versioned and checksummed, so that a token this server did not issue (a
// guess, a truncation, a token of another service) is refused instead of
// silently listing from some position. Tokens are stable across restarts
// and replicas: they hold no secret, only a position.
//
// Format: "v1." + base64url(key) + "." + 16 hex digits of a 64-bit FNV-1a
// hash of the version tag and the key.

// The longest token accepted; an issued token is far shorter (a sort key is
// a timestamp and Kubernetes names of bounded length).
inline constexpr size_t kMaxPageTokenBytes = 2048;

std::string EncodePageToken(absl::string_view key);

// The key of a token from EncodePageToken, else InvalidArgument
// "page_token is not one this server issued ...".
absl::StatusOr<std::string> DecodePageToken(absl::string_view token);

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_PAGE_TOKEN_H_
