#include "server/daemon/log.h"

#include <cstdio>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/common/json.h"

namespace wm::daemon {
namespace {

bool json_format = false;
LogLevel min_level = LogLevel::kInfo;
std::mutex write_mu;

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "DEBUG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kError:
      return "ERROR";
  }
  return "INFO";
}

}  // namespace

void ConfigureLog(absl::string_view format, absl::string_view level) {
  json_format = format == "json";
  min_level = level == "debug"   ? LogLevel::kDebug
              : level == "warn"  ? LogLevel::kWarn
              : level == "error" ? LogLevel::kError
                                 : LogLevel::kInfo;
}

void Log(LogLevel level, absl::string_view message, const LogFields& fields) {
  if (level < min_level) return;
  std::string time = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  std::string line;
  if (json_format) {
    Json object = {{"time", time}, {"level", LevelName(level)}, {"msg", std::string(message)}};
    for (const auto& [key, value] : fields) object[key] = value;
    line = object.dump(-1, ' ', false, Json::error_handler_t::replace);
  } else {
    line = absl::StrCat(time, " ", LevelName(level), " ", message);
    for (const auto& [key, value] : fields) {
      bool quote = value.empty() || value.find_first_of(" \"=") != std::string::npos;
      absl::StrAppend(&line, " ", key, "=", quote ? Json(value).dump() : value);
    }
  }
  line.push_back('\n');
  std::unique_lock lock(write_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace wm::daemon
