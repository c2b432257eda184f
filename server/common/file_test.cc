#include "server/common/file.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace wm {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/file_test_" + std::to_string(getpid()) + "_" + name;
}

TEST(ReadFileToStringTest, ReadsTheWholeFileBytesAsTheyAre) {
  const std::string path = TempPath("whole");
  std::string content(20000, 'x');  // more than one read's buffer
  content += std::string("\0\n\xff", 3);
  std::ofstream(path, std::ios::binary) << content;
  absl::StatusOr<std::string> read = ReadFileToString(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, content);
  std::remove(path.c_str());
}

TEST(ReadFileToStringTest, AMissingFileIsNotFoundWithItsPathAndReason) {
  const std::string path = TempPath("missing");
  absl::StatusOr<std::string> read = ReadFileToString(path);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(read.status().message(), "open failed: " + path + ": No such file or directory");
  absl::Status worded = FileErrorAs(read.status(), "config file", path);
  EXPECT_EQ(worded.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(worded.message(), "config file " + path + ": No such file or directory");
}

TEST(ReadFileToStringTest, ALargerFileIsRefusedAtTheBound) {
  const std::string path = TempPath("large");
  std::ofstream(path, std::ios::binary) << std::string(10, 'x');
  EXPECT_TRUE(ReadFileToString(path, 10).ok());
  absl::StatusOr<std::string> read = ReadFileToString(path, 9);
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(FileErrorAs(read.status(), "cannot read", path).message(),
            "cannot read " + path + ": larger than 9 bytes");
  std::remove(path.c_str());
}

TEST(ReadFileToStringTest, ADirectoryIsAReadError) {
  const std::string dir = ::testing::TempDir();
  absl::StatusOr<std::string> read = ReadFileToString(dir);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(FileErrorAs(read.status(), "cannot read", dir).message(),
            "cannot read " + dir + ": Is a directory");
}

TEST(FileErrorAsTest, AMessageWithoutThePathIsKeptWhole) {
  absl::Status worded = FileErrorAs(absl::InternalError("something else"), "cannot read", "/p");
  EXPECT_EQ(worded.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(worded.message(), "cannot read /p: something else");
}

}  // namespace
}  // namespace wm
