#ifndef WM_SERVER_DAEMON_LOG_H_
#define WM_SERVER_DAEMON_LOG_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace wm::daemon {

// Structured logs on stderr, one line per event: `text` is
// `2026-11-30T20:00:00.000Z INFO message key=value ...`, `json` is one JSON
// object per line (time, level, msg, then the fields), for log pipelines.
enum class LogLevel { kDebug, kInfo, kWarn, kError };

using LogFields = std::vector<std::pair<std::string, std::string>>;

// Set once at startup, before other threads log.
void ConfigureLog(absl::string_view format, absl::string_view level);
void Log(LogLevel level, absl::string_view message, const LogFields& fields = {});

}  // namespace wm::daemon

#endif  // WM_SERVER_DAEMON_LOG_H_
