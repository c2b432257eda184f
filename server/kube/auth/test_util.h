#ifndef WM_SERVER_KUBE_AUTH_TEST_UTIL_H_
#define WM_SERVER_KUBE_AUTH_TEST_UTIL_H_

// Fixtures shared by this directory's tests.

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/kube/auth/credentials.h"

namespace wm::kube::testing {

// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/kube_auth_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = std::filesystem::path(pattern).lexically_normal().string();
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // dir_/relative, with parent directories created.
  std::string Write(const std::string& relative, const std::string& content) {
    std::string path = dir_ + "/" + relative;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    EXPECT_TRUE(out.good()) << path;
    return path;
  }

  // An executable /bin/sh script at dir_/relative.
  std::string WriteScript(const std::string& relative, const std::string& body) {
    std::string path = Write(relative, "#!/bin/sh\n" + body);
    EXPECT_EQ(chmod(path.c_str(), 0755), 0);
    return path;
  }

  std::string Read(const std::string& relative) {
    std::ifstream in(dir_ + "/" + relative, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  bool Exists(const std::string& relative) {
    return std::filesystem::exists(dir_ + "/" + relative);
  }

  std::string dir_;
};

// A clock tests move by hand.
class FakeClock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000))
      : now_(std::make_shared<absl::Time>(start)) {}
  Clock AsClock() const {
    auto now = now_;
    return [now] { return *now; };
  }
  void Advance(absl::Duration d) { *now_ += d; }
  void Set(absl::Time t) { *now_ = t; }
  absl::Time Now() const { return *now_; }

 private:
  std::shared_ptr<absl::Time> now_;
};

}  // namespace wm::kube::testing

#endif  // WM_SERVER_KUBE_AUTH_TEST_UTIL_H_
