#include "client/wmctl/snapshot_daemon.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "server/common/json.h"
#include "server/common/yaml_json.h"

namespace wm::wmctl {

absl::Time TestNow() {
  absl::Time now;
  std::string err;
  absl::ParseTime(absl::RFC3339_full, "2026-12-01T14:30:00Z", &now, &err);
  return now;
}

Result RunCli(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              const std::string& stdin_text) {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  Environment environment;
  environment.getenv = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  environment.now = [] { return TestNow(); };
  int code = RunWmctl(argv, in, out, err, environment);
  return {code, out.str(), err.str()};
}

std::string SourceDir() { return WM_SOURCE_DIR; }
std::string TestdataDir() { return SourceDir() + "/client/wmctl/testdata"; }

std::string* SnapshotDaemonTest::dir_ = nullptr;
std::string* SnapshotDaemonTest::problem_ = nullptr;
testing::DaemonProcess* SnapshotDaemonTest::daemon_ = nullptr;

void SnapshotDaemonTest::SetUpTestSuite() {
  namespace fs = std::filesystem;
  dir_ = new std::string(absl::StrCat(::testing::TempDir(), "/wmctl-snapshot-", getpid()));
  problem_ = new std::string;
  std::string snapshot = *dir_ + "/snapshot";
  fs::remove_all(snapshot);  // An earlier run's, under a recycled process id.
  fs::create_directories(snapshot);
  fs::copy_file(SourceDir() + "/integration_tests/seed/cluster-state.yaml",
                snapshot + "/cluster-state.yaml", fs::copy_options::overwrite_existing);
  for (const char* file : {"trainer.yaml", "sweep.yaml"}) {
    fs::copy_file(TestdataDir() + "/snapshot/" + file, snapshot + "/" + file,
                  fs::copy_options::overwrite_existing);
  }
  // A PyTorchJob with its pods in namespace ml-team: a gang with subgroups.
  Json gang_case =
      ReadYamlFile(SourceDir() + "/catalog/cases/kubeflow-org-pytorchjob-v1/gang-worker-pod.yaml")
          .value()
          .at(0);
  std::string pytorchjob = ToYaml(gang_case["object"]);
  for (const Json& pod : gang_case["pods"]) pytorchjob += "---\n" + ToYaml(pod);
  std::ofstream(snapshot + "/pytorchjob.yaml") << pytorchjob;
  // Another process may take the port between DaemonProcess's choice and
  // the daemon's bind: try again on a new one.
  for (int attempt = 0; attempt < 3; ++attempt) {
    daemon_ =
        new testing::DaemonProcess({"--snapshot", snapshot, "--definitions",
                                    TestdataDir() + "/definitions", "--shutdown-grace", "0s"});
    absl::Status started = daemon_->Start();
    if (started.ok()) return;
    *problem_ = std::string(started.message());
    delete daemon_;
    daemon_ = nullptr;
  }
}

void SnapshotDaemonTest::TearDownTestSuite() {
  if (daemon_ != nullptr) {
    EXPECT_EQ(daemon_->Stop(), 0) << daemon_->Log();
    std::filesystem::remove(daemon_->log_path());
  }
  delete daemon_;
  daemon_ = nullptr;
  if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
  delete dir_;
  delete problem_;
  dir_ = problem_ = nullptr;
}

void SnapshotDaemonTest::SetUp() {
  if (daemon_ == nullptr) FAIL() << *problem_;
}

Result SnapshotDaemonTest::Run(std::vector<std::string> argv,
                               const std::map<std::string, std::string>& env,
                               const std::string& stdin_text) {
  argv.push_back("--address");
  argv.push_back(address());
  return RunCli(argv, env, stdin_text);
}

}  // namespace wm::wmctl
