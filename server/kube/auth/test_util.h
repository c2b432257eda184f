#ifndef WM_SERVER_KUBE_AUTH_TEST_UTIL_H_
#define WM_SERVER_KUBE_AUTH_TEST_UTIL_H_

// Fixtures shared by this directory's tests.

#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/common/testing/fake_clock.h"
#include "server/common/testing/file_content.h"
#include "server/common/testing/scratch_dir.h"
#include "server/kube/auth/credentials.h"

namespace wm::kube::testing {

// A fresh directory per test (dir_), removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  // dir_/relative, with parent directories created.
  std::string Write(const std::string& relative, const std::string& content) {
    return scratch_.Write(relative, content);
  }

  // An executable /bin/sh script at dir_/relative.
  std::string WriteScript(const std::string& relative, const std::string& body) {
    std::string path = Write(relative, "#!/bin/sh\n" + body);
    EXPECT_EQ(chmod(path.c_str(), 0755), 0);
    return path;
  }

  std::string Read(const std::string& relative) {
    return wm::testing::FileContent(dir_ + "/" + relative);
  }

  bool Exists(const std::string& relative) {
    return std::filesystem::exists(dir_ + "/" + relative);
  }

  wm::testing::ScratchDir scratch_{"kube_auth"};
  const std::string dir_ = scratch_.path();
};

using ::wm::testing::FakeClock;

}  // namespace wm::kube::testing

#endif  // WM_SERVER_KUBE_AUTH_TEST_UTIL_H_
