#ifndef WM_SERVER_COMMON_TESTING_SCRATCH_DIR_H_
#define WM_SERVER_COMMON_TESTING_SCRATCH_DIR_H_

// A directory of its own for a test to write files into, removed with it.
// ctest runs every gtest case as its own process, several at once: a fixed
// path under ::testing::TempDir() is shared by all of them, and one case
// rewriting a file while another reads it fails at random. Header-only.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace wm::testing {

class ScratchDir {
 public:
  // A fresh directory under ::testing::TempDir() named after `prefix`.
  explicit ScratchDir(const std::string& prefix = "wm_scratch") {
    std::string pattern = ::testing::TempDir() + "/" + prefix + "_XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp " << pattern << " failed";
    }
    path_ = std::filesystem::path(pattern).lexically_normal().string();
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `content` to path()/relative (parents created) and returns its path.
  std::string Write(const std::string& relative, const std::string& content) const {
    std::string file = path_ + "/" + relative;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    EXPECT_TRUE(out.good()) << file;
    return file;
  }

 private:
  std::string path_;
};

}  // namespace wm::testing

#endif  // WM_SERVER_COMMON_TESTING_SCRATCH_DIR_H_
