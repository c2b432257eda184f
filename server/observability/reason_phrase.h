#ifndef WM_SERVER_OBSERVABILITY_REASON_PHRASE_H_
#define WM_SERVER_OBSERVABILITY_REASON_PHRASE_H_

#include "absl/strings/string_view.h"

// The status line's words, shared by the daemon's two HTTP servers
// (HttpServer here, admission's HttpsServer), as http_request_head.h; not
// part of this layer's API.
namespace wm::observability::internal {

// The reason phrase of HTTP status `status` (RFC 9110 section 15; 499 as
// nginx names it), for every status the servers answer; "Status" for
// another.
absl::string_view ReasonPhrase(int status);

}  // namespace wm::observability::internal

#endif  // WM_SERVER_OBSERVABILITY_REASON_PHRASE_H_
