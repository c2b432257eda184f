#ifndef WM_SERVER_COMMON_STATUS_CODE_NAME_H_
#define WM_SERVER_COMMON_STATUS_CODE_NAME_H_

#include <string>

#include "absl/status/status.h"

namespace wm {

// "NOT_FOUND" for 5: a status code's name as gRPC and Abseil spell it (their
// codes agree, number for number), for metric labels and error bodies.
// Codes without a name (Abseil names 0 to 16) are their number: "17".
std::string StatusCodeName(absl::StatusCode code);

}  // namespace wm

#endif  // WM_SERVER_COMMON_STATUS_CODE_NAME_H_
