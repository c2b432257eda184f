// wmctl's outputs, every command in every format, against the snapshot
// daemon, compared with the files in testdata/golden. The AGE columns are
// deterministic: the snapshot's objects have fixed creation timestamps and
// wmctl is given a fixed clock (TestNow). WM_UPDATE_GOLDEN=1 rewrites the
// files; a mismatch prints a unified diff.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/wmctl/snapshot_daemon.h"
#include "gtest/gtest.h"
#include "server/common/testing/file_content.h"

namespace wm::wmctl {
namespace {

struct GoldenCase {
  std::string name;  // testdata/golden/NAME (stdout) and NAME.stderr
  std::vector<std::string> argv;
  int code = 0;
  std::string stdin_file;  // from testdata, when the command reads "-"
  bool offline = false;    // without --address of the daemon
};

void PrintTo(const GoldenCase& c, std::ostream* os) {
  *os << "wmctl " << absl::StrJoin(c.argv, " ");
}

// `diff -u` of the golden file and what wmctl printed.
std::string UnifiedDiff(const std::string& golden, const std::string& actual) {
  std::string actual_path = absl::StrCat(::testing::TempDir(), "/wmctl-golden-", getpid());
  std::ofstream(actual_path, std::ios::binary) << actual;
  std::string command =
      absl::StrCat("diff -u --label golden --label actual '", golden, "' '", actual_path, "' 2>&1");
  std::string diff;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) diff.append(buffer, n);
    pclose(pipe);
  }
  std::filesystem::remove(actual_path);
  return diff;
}

// Compares `actual` with the golden file (absent: empty), or rewrites it.
void ExpectGolden(const std::string& file, const std::string& actual) {
  std::string path = TestdataDir() + "/golden/" + file;
  bool exists = std::filesystem::exists(path);
  const char* update = std::getenv("WM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    if (!actual.empty() || !absl::EndsWith(file, ".stderr")) {
      std::ofstream(path, std::ios::binary) << actual;
    } else if (exists) {
      std::filesystem::remove(path);
    }
    return;
  }
  std::string golden = exists ? wm::testing::FileContent(path) : "";
  if (golden == actual) return;
  ADD_FAILURE() << "output differs from " << path << " (WM_UPDATE_GOLDEN=1 rewrites it):\n"
                << (exists ? UnifiedDiff(path, actual) : "no such file; the output:\n" + actual);
}

// The checkout's path in messages (rejected definitions' sources) varies.
std::string Normalize(const std::string& text) {
  return absl::StrReplaceAll(text, {{SourceDir() + "/", ""}});
}

class GoldenTest : public SnapshotDaemonTest, public ::testing::WithParamInterface<GoldenCase> {};

TEST_P(GoldenTest, MatchesGoldenFile) {
  const GoldenCase& c = GetParam();
  std::string stdin_text =
      c.stdin_file.empty() ? "" : wm::testing::FileContent(TestdataDir() + "/" + c.stdin_file);
  Result r = c.offline ? RunCli(c.argv, {}, stdin_text) : Run(c.argv, {}, stdin_text);
  EXPECT_EQ(r.code, c.code) << "wmctl " << absl::StrJoin(c.argv, " ") << "\n" << r.err;
  ExpectGolden(c.name, Normalize(r.out));
  ExpectGolden(c.name + ".stderr", Normalize(r.err));
}

const std::string kTrainer = TestdataDir() + "/definitions/trainer.yaml";
const std::string kBroken = TestdataDir() + "/definitions/broken.yaml";

INSTANTIATE_TEST_SUITE_P(
    Outputs, GoldenTest,
    ::testing::Values(
        GoldenCase{"get.txt", {"get"}}, GoldenCase{"get-all-namespaces.txt", {"get", "-A"}},
        GoldenCase{"get-wide.txt", {"get", "-A", "-o", "wide"}},
        GoldenCase{"get.json", {"get", "-A", "-o", "json"}},
        GoldenCase{"get.yaml", {"get", "-A", "-o", "yaml"}},
        GoldenCase{"get-name.json", {"get", "Trainer/tune", "-n", "ml-team", "-o", "json"}},
        GoldenCase{"get-empty.txt", {"get", "--phase", "Failed"}},
        GoldenCase{"describe.txt", {"describe", "JobSet/demo"}},
        GoldenCase{"describe.json", {"describe", "JobSet/demo", "-o", "json"}},
        GoldenCase{"describe.yaml", {"describe", "JobSet/demo", "-o", "yaml"}},
        GoldenCase{"describe-no-pods.txt", {"describe", "trainers", "tune", "-n", "ml-team"}},
        GoldenCase{"describe-partial.txt", {"describe", "Sweep/search", "-n", "ml-team"}},
        GoldenCase{"describe-partial.json",
                   {"describe", "Sweep/search", "-n", "ml-team", "-o", "json"}},
        GoldenCase{"describe-pod-limit.txt",
                   {"describe", "PyTorchJob/train", "-n", "ml-team", "--pod-limit", "2"}},
        GoldenCase{"describe-component-limit.txt",
                   {"describe", "JobSet/demo", "--component-limit", "1"}},
        GoldenCase{"describe-uncovered.json", {"describe", "Unknown/x", "-o", "json"}, 4},
        GoldenCase{"gang.txt", {"gang", "train-worker-2", "-n", "ml-team"}},
        GoldenCase{"gang.json", {"gang", "train-worker-2", "-n", "ml-team", "-o", "json"}},
        GoldenCase{"gang.yaml", {"gang", "train-worker-2", "-n", "ml-team", "-o", "yaml"}},
        GoldenCase{"gang-jobset.txt", {"gang", "demo-worker-1-0-x1w"}},
        GoldenCase{"definitions.txt", {"definitions"}},
        GoldenCase{"definitions-group.json",
                   {"definitions", "--group", "example.com", "-o", "json"}},
        GoldenCase{"definitions-group.yaml",
                   {"definitions", "--group", "example.com", "-o", "yaml"}},
        GoldenCase{"definitions-name.txt", {"definitions", "example-com-trainer-v1"}},
        GoldenCase{"definitions-name.yaml",
                   {"definitions", "example-com-trainer-v1", "-o", "yaml"}},
        GoldenCase{"definitions-name.json",
                   {"definitions", "example-com-trainer-v1", "-o", "json"}},
        GoldenCase{"definitions-offline-name.yaml",
                   {"definitions", "example-com-trainer-v1", "--definitions",
                    TestdataDir() + "/definitions", "-o", "yaml"},
                   0,
                   "",
                   true},
        GoldenCase{"validate-valid.txt", {"validate", kTrainer}},
        GoldenCase{"validate-invalid.txt", {"validate", kBroken}, 1},
        GoldenCase{"validate-stdin.txt", {"validate", "-"}, 1, "definitions/broken.yaml"}),
    [](const ::testing::TestParamInfo<GoldenCase>& info) {
      return absl::StrReplaceAll(info.param.name, {{"-", "_"}, {".", "_"}});
    });

}  // namespace
}  // namespace wm::wmctl
