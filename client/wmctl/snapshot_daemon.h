#ifndef WM_CLIENT_WMCTL_SNAPSHOT_DAEMON_H_
#define WM_CLIENT_WMCTL_SNAPSHOT_DAEMON_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "client/wmctl/commands.h"
#include "gtest/gtest.h"
#include "integration_tests/daemon/daemon_process.h"

namespace wm::wmctl {

// What one wmctl run printed.
struct Result {
  int code;
  std::string out, err;
};

// The clock the tests give wmctl: 2026-12-01T14:30:00Z, when the seed
// JobSet and the PyTorchJob (created 2026-11-30T12:00:00Z) are 26h old.
absl::Time TestNow();

// wmctl in-process with only `env` as its environment (so a developer's
// ~/.config/wmctl or WM_ADDRESS does not leak in) and TestNow() as its clock.
Result RunCli(const std::vector<std::string>& argv,
              const std::map<std::string, std::string>& env = {},
              const std::string& stdin_text = "");

// Tests against one real workloadmapd per suite, serving a snapshot: the
// seed JobSet (default/demo) with its Jobs and pods, a PyTorchJob with its
// pods (ml-team/train, a gang with subgroups) and a Trainer without pods
// (ml-team/tune) of a file definition in testdata/definitions, a Sweep
// with one pod (ml-team/search) whose evaluator component fails (a partial
// answer) of another, next to an invalid one the daemon rejects.
class SnapshotDaemonTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;

  static std::string address() { return daemon_->address(); }
  // wmctl with --address of the daemon.
  static Result Run(std::vector<std::string> argv,
                    const std::map<std::string, std::string>& env = {},
                    const std::string& stdin_text = "");

  static std::string* dir_;
  static std::string* problem_;
  static testing::DaemonProcess* daemon_;
};

// The checkout (WM_SOURCE_DIR) and testdata.
std::string SourceDir();
std::string TestdataDir();

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_SNAPSHOT_DAEMON_H_
