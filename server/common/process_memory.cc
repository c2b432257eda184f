#include "server/common/process_memory.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/common/file.h"

namespace wm {

ResidentMemory ResidentMemoryOf(absl::string_view pid) {
  // statm: size resident shared text lib data dt, in pages.
  absl::StatusOr<std::string> statm =
      ReadFileToString(absl::StrCat("/proc/", pid, "/statm"), /*max_bytes=*/4096);
  if (!statm.ok()) return {};
  std::vector<absl::string_view> fields = absl::StrSplit(*statm, ' ', absl::SkipWhitespace());
  size_t resident = 0, shared = 0;
  if (fields.size() < 3 || !absl::SimpleAtoi(fields[1], &resident) ||
      !absl::SimpleAtoi(fields[2], &shared) || shared > resident) {
    return {};
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return {.total = resident * page, .shared = shared * page};
}

}  // namespace wm
