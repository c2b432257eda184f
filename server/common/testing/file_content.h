#ifndef WM_SERVER_COMMON_TESTING_FILE_CONTENT_H_
#define WM_SERVER_COMMON_TESTING_FILE_CONTENT_H_

// The whole content of a file a test reads (a fixture, a golden file, a
// catalog definition), through the daemon's own reader (common/file.h): a
// file that cannot be read is a test failure that names it and says why,
// not an empty string that fails later and elsewhere. Header-only; the test
// links wm_common.

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/common/file.h"

namespace wm::testing {

inline std::string FileContent(const std::string& path) {
  absl::StatusOr<std::string> content = ReadFileToString(path);
  if (!content.ok()) {
    ADD_FAILURE() << content.status();
    return "";
  }
  return *std::move(content);
}

}  // namespace wm::testing

#endif  // WM_SERVER_COMMON_TESTING_FILE_CONTENT_H_
