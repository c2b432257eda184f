// wmctl's daemon commands against a real workloadmapd serving the seed
// cluster state (--snapshot), started once for the suite.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/wmctl/commands.h"
#include "client/wmctl/describe_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/common/yaml_json.h"

namespace wm::wmctl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The seed JobSet's metadata.creationTimestamp.
constexpr char kCreated[] = "2026-11-30T12:00:00Z";

struct Result {
  int code;
  std::string out, err;
};

Result RunCli(std::vector<std::string> argv) {
  std::istringstream in;
  std::ostringstream out, err;
  int code = RunWmctl(argv, in, out, err);
  return {code, out.str(), err.str()};
}

// A port nothing listens on right now.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return 0;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

class LiveTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    namespace fs = std::filesystem;
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "/wmctl-live-", getpid()));
    fs::create_directories(*dir_ + "/snapshot");
    fs::copy_file(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml",
                  *dir_ + "/snapshot/cluster-state.yaml", fs::copy_options::overwrite_existing);
    // A PyTorchJob with its pods in namespace ml-team: a gang with subgroups.
    Json gang_case = ReadYamlFile(std::string(WM_SOURCE_DIR) +
                                  "/catalog/cases/kubeflow-org-pytorchjob-v1/gang-worker-pod.yaml")
                         .value()
                         .at(0);
    std::string pytorchjob = ToYaml(gang_case["object"]);
    for (const Json& pod : gang_case["pods"]) pytorchjob += "---\n" + ToYaml(pod);
    std::ofstream(*dir_ + "/snapshot/pytorchjob.yaml") << pytorchjob;
    log_ = new std::string(*dir_ + "/workloadmapd.log");
    problem_ = new std::string;
    // Another process may take the port between FreePort and the daemon's
    // bind: try again on a new one.
    for (int attempt = 0; attempt < 3 && pid_ <= 0; ++attempt) StartDaemon();
  }

  // Starts workloadmapd on a free port and waits until it serves; on
  // failure, pid_ is 0 and problem_ says why.
  static void StartDaemon() {
    int port = FreePort();
    delete address_;
    address_ = new std::string(absl::StrCat("127.0.0.1:", port));
    std::string binary = std::string(WM_BINARY_DIR) + "/bin/workloadmapd";
    std::vector<std::string> args = {binary,     "--snapshot",       *dir_ + "/snapshot",
                                     "--listen", *address_,          "--metrics-address",
                                     "off",      "--shutdown-grace", "0s"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) {
      pid_ = 0;
      *problem_ = "fork failed";
      return;
    }
    if (pid_ == 0) {
      // Only async-signal-safe calls until exec.
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      int fd = open(log_->c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
    // "ready" once the snapshot is resolved; then a listing must answer.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        *problem_ =
            absl::StrCat("workloadmapd exited (wait status ", status, "):\n", ReadFile(*log_));
        return;
      }
      if (absl::StrContains(ReadFile(*log_), " ready ") &&
          RunCli({"get", "-A", "--address", *address_}).code == 0) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    *problem_ = absl::StrCat("workloadmapd did not become ready:\n", ReadFile(*log_));
    StopDaemon();
  }

  static void StopDaemon() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "workloadmapd ignored SIGTERM";
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    pid_ = 0;
  }

  static void TearDownTestSuite() {
    StopDaemon();
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
    delete dir_;
    delete address_;
    delete log_;
    delete problem_;
    dir_ = address_ = log_ = problem_ = nullptr;
  }

  void SetUp() override {
    if (pid_ <= 0) FAIL() << *problem_;
  }

  // wmctl with --address of the test daemon.
  static Result Run(std::vector<std::string> argv) {
    argv.push_back("--address");
    argv.push_back(*address_);
    return RunCli(argv);
  }

  // Run, with the seed's age as printed (the age before or after the call,
  // whichever `render` then matches).
  static void ExpectOutput(std::vector<std::string> argv,
                           const std::function<std::string(const std::string&)>& render) {
    std::string before = Age(kCreated);
    Result r = Run(argv);
    std::string after = Age(kCreated);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    if (r.out == render(before)) return;
    EXPECT_EQ(r.out, render(after));
  }

  static std::string* dir_;
  static std::string* address_;
  static std::string* log_;
  static std::string* problem_;
  static pid_t pid_;
};

std::string* LiveTest::dir_ = nullptr;
std::string* LiveTest::address_ = nullptr;
std::string* LiveTest::log_ = nullptr;
std::string* LiveTest::problem_ = nullptr;
pid_t LiveTest::pid_ = 0;

// Pads `cell` to `width` plus the three-space column gap.
std::string Cell(const std::string& cell, size_t width) {
  return cell + std::string(std::max(width, cell.size()) - cell.size() + 3, ' ');
}

TEST_F(LiveTest, DescribeTable) {
  const std::string body =
      "\n"
      "|-- leader                   1/1 ready  gpu: 4  gpu-node-1\n"
      "|   `-- demo-leader-0-0-x0l  Running    gpu: 4  gpu-node-1\n"
      "`-- worker                   2/2 ready  gpu: 8  gpu-node-2,gpu-node-3\n"
      "    |-- demo-worker-0-0-x0w  Running    gpu: 4  gpu-node-2\n"
      "    `-- demo-worker-1-0-x1w  Running    gpu: 4  gpu-node-3\n"
      "\n"
      "Phase: Running\n"
      "\n"
      "Resources:\n"
      "COMPONENT   REPLICAS   GPU   CPU   MEMORY\n"
      "leader      1          4     0     0\n"
      "worker      2          8     0     0\n"
      "TOTAL       3          12    0     0\n";
  auto render = [&](const std::string& age) {
    return "JobSet/demo   namespace: default   definition: jobset-x-k8s-io-jobset-v1alpha2 "
           "(catalog)   age: " +
           age + "\n" + body;
  };
  // By Kind and by resource, TYPE/NAME and TYPE NAME, with -n.
  ExpectOutput({"describe", "JobSet/demo"}, render);
  ExpectOutput({"describe", "jobsets", "demo", "-n", "default"}, render);
  ExpectOutput({"describe", "jobsets.jobset.x-k8s.io/demo"}, render);
}

TEST_F(LiveTest, DescribeJsonAndPodLimit) {
  Result r = Run({"describe", "JobSet/demo", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  Json view = Json::parse(r.out);
  EXPECT_EQ(view["fileMode"], false);
  EXPECT_EQ(view["createdAt"], kCreated);
  EXPECT_EQ(view["matchedStatuses"], Json::parse(R"(["Running"])"));
  EXPECT_EQ(view["components"][1]["replicas"],
            Json::parse(R"({"desired":2,"current":2,"ready":2})"));
  EXPECT_EQ(view["components"][1]["pods"].size(), 2u);
  EXPECT_EQ(view["gang"]["podGroups"][0]["minMember"], 3);

  Result yaml = Run({"describe", "JobSet/demo", "-o", "yaml"});
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  EXPECT_EQ(ParseYamlDocuments(yaml.out).value().at(0), view);

  Result pods = Run({"describe", "JobSet/demo", "--pod-limit", "1"});
  ASSERT_EQ(pods.code, 0) << pods.err;
  EXPECT_THAT(pods.out, HasSubstr("    |-- demo-worker-0-0-x0w  Running    gpu: 4  gpu-node-2\n"
                                  "    `-- ... and 1 more (0 unhealthy shown)\n"));
  Result components = Run({"describe", "JobSet/demo", "--component-limit", "1"});
  ASSERT_EQ(components.code, 0) << components.err;
  EXPECT_THAT(components.out, HasSubstr("\n`-- ... and 1 more component(s)\n"));
}

TEST_F(LiveTest, GetTable) {
  auto render = [](const std::string& age) {
    return "NAME   TYPE     STATUS    COMPONENTS               GPU   AGE\n"
           "demo   JobSet   Running   leader 1/1, worker 2/2   12    " +
           age + "\n";
  };
  ExpectOutput({"get"}, render);
  ExpectOutput({"get", "JobSet"}, render);
  ExpectOutput({"get", "JobSet.jobset.x-k8s.io/demo"}, render);
  ExpectOutput({"get", "--all-types", "--phase", "Running,Failed"}, render);
  // Newest first, then by namespace: both have the same creationTimestamp.
  ExpectOutput({"get", "-A"}, [](const std::string& age) {
    return "NAMESPACE   NAME    TYPE         STATUS    COMPONENTS               GPU   AGE\n"
           "default     demo    JobSet       Running   leader 1/1, worker 2/2   12    " +
           age +
           "\n"
           "ml-team     train   PyTorchJob   Running   master 1/1, worker 3/3   32    " +
           age + "\n";
  });
  ExpectOutput({"get", "-A", "-o", "wide"}, [](const std::string& age) {
    return "NAMESPACE   NAME    TYPE         STATUS    COMPONENTS               GPU   " +
           Cell("AGE", age.size()) + "CLUSTER    DEFINITION\n" +
           "default     demo    JobSet       Running   leader 1/1, worker 2/2   12    " +
           Cell(age, 3) + "snapshot   jobset-x-k8s-io-jobset-v1alpha2\n" +
           "ml-team     train   PyTorchJob   Running   master 1/1, worker 3/3   32    " +
           Cell(age, 3) + "snapshot   kubeflow-org-pytorchjob-v1\n";
  });
  ExpectOutput({"get", "pytorchjobs", "-n", "ml-team"}, [](const std::string& age) {
    return "NAME    TYPE         STATUS    COMPONENTS               GPU   AGE\n"
           "train   PyTorchJob   Running   master 1/1, worker 3/3   32    " +
           age + "\n";
  });
}

TEST_F(LiveTest, GetJsonAndFilters) {
  Result r = Run({"get", "JobSet/demo", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), Json::parse(R"([{
    "name": "demo", "namespace": "default", "kind": "JobSet",
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "cluster": "snapshot",
    "createdAt": "2026-11-30T12:00:00Z",
    "definition": "jobset-x-k8s-io-jobset-v1alpha2",
    "phases": ["Running"], "matchedStatuses": ["Running"], "gpus": 12,
    "components": [
      {"name": "replicatedjob", "instanceId": "leader",
       "replicas": {"desired": 1, "current": 1, "ready": 1}, "gpus": 4},
      {"name": "replicatedjob", "instanceId": "worker",
       "replicas": {"desired": 2, "current": 2, "ready": 2}, "gpus": 8}]}])"));
  Result yaml = Run({"get", "-o", "yaml"});
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  EXPECT_EQ(ParseYamlDocuments(yaml.out).value().at(0), Json::parse(r.out));
  Result all = Run({"get", "-A", "-o", "json"});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(Json::parse(all.out).size(), 2u);

  // Filters that keep nothing: an empty listing, not an error.
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"get", "--phase", "Failed"}, {"get", "-l", "app=none"}, {"get", "Deployment"}}) {
    Result empty = Run(argv);
    EXPECT_EQ(empty.code, 0) << argv[1] << ": " << empty.err;
    EXPECT_EQ(empty.out, "");
    EXPECT_EQ(empty.err, "No workloads found in namespace default.\n");
  }
  Result other = Run({"get", "-n", "other"});
  EXPECT_EQ(other.err, "No workloads found in namespace other.\n");
  EXPECT_EQ(Run({"get", "-n", "other", "-o", "json"}).out, "[]\n");

  Result missing = Run({"get", "JobSet/nope"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_EQ(missing.err, "error: JobSet nope not found in namespace default\n");
  // The daemon rejects an unknown status and a bad selector.
  Result bad_phase = Run({"get", "--phase", "Bogus"});
  EXPECT_EQ(bad_phase.code, 2);
  EXPECT_THAT(bad_phase.err, StartsWith("error: statuses: unknown status \"Bogus\""));
  EXPECT_EQ(Run({"get", "-l", "a in (b"}).code, 2);
}

TEST_F(LiveTest, GangOfJobSetPod) {
  Result r = Run({"gang", "demo-worker-1-0-x1w"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Pod/demo-worker-1-0-x1w   namespace: default   top owner: JobSet/demo\n"
            "\n"
            "PodGroup: pg-a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f-jobset   minMember: 3\n"
            "\n"
            "Assignment:   podGroup: pg-a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f-jobset   "
            "component: replicatedjob\n");
  Result missing = Run({"gang", "nope"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_EQ(missing.out, "");
  EXPECT_THAT(missing.err, StartsWith("error: "));
  EXPECT_EQ(Run({"gang", "demo-worker-1-0-x1w", "-n", "ml-team"}).code, 3);
}

TEST_F(LiveTest, GangWithSubgroups) {
  Result r = Run({"gang", "train-worker-2", "-n", "ml-team"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Pod/train-worker-2   namespace: ml-team   top owner: PyTorchJob/train\n"
            "\n"
            "PodGroup: pg-5e1f0c2a-7b3d-4e6f-9a8b-0c1d2e3f4a5b-pytorchjob   minSubGroup: 2\n"
            "SUBGROUP   PARENT   MINMEMBER\n"
            "master     <none>   1\n"
            "worker     <none>   3\n"
            "\n"
            "Assignment:   podGroup: pg-5e1f0c2a-7b3d-4e6f-9a8b-0c1d2e3f4a5b-pytorchjob   "
            "subGroup: worker   component: worker\n");
  Result json = Run({"gang", "pod/train-worker-2", "-n", "ml-team", "-o", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  Json expected = Json::parse(R"({
    "pod": "train-worker-2", "namespace": "ml-team",
    "topOwner": {"kind": "PyTorchJob", "apiVersion": "kubeflow.org/v1",
                 "namespace": "ml-team", "name": "train", "cluster": "snapshot"},
    "podGroup": {"name": "pg-5e1f0c2a-7b3d-4e6f-9a8b-0c1d2e3f4a5b-pytorchjob",
                 "form": "podGroup", "minSubGroup": 2,
                 "subGroups": [{"name": "master", "minMember": 1},
                               {"name": "worker", "minMember": 3}]},
    "assignment": {"podGroup": "pg-5e1f0c2a-7b3d-4e6f-9a8b-0c1d2e3f4a5b-pytorchjob",
                   "subGroup": "worker", "component": "worker"}})");
  EXPECT_EQ(Json::parse(json.out), expected);
  Result yaml = Run({"gang", "train-worker-2", "-n", "ml-team", "-o", "yaml"});
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  EXPECT_EQ(ParseYamlDocuments(yaml.out).value().at(0), expected);
}

TEST_F(LiveTest, NotFoundExitsThree) {
  Result r = Run({"describe", "JobSet/nope"});
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("error: "));
  EXPECT_THAT(r.err, HasSubstr("nope not found"));
  EXPECT_EQ(Run({"describe", "JobSet/demo", "-n", "other"}).code, 3);
}

TEST_F(LiveTest, UncoveredKindExitsFour) {
  Result r = Run({"describe", "Unknown/x"});
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, StartsWith("error: ref: no definition covers kind \"Unknown\""));
  Result resource = Run({"describe", "unknowns/x", "-o", "json"});
  EXPECT_EQ(resource.code, 4);
  Json error = Json::parse(resource.out);
  EXPECT_EQ(error["error"], "no_definition_for_type");
  EXPECT_EQ(error["type"], "unknowns");
}

TEST_F(LiveTest, AddressFromEnvironment) {
  setenv("WM_ADDRESS", address_->c_str(), 1);
  Result r = RunCli({"get", "-o", "json"});
  unsetenv("WM_ADDRESS");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out).size(), 1u);
}

TEST(WmctlLiveTest, UnreachableDaemonExitsOne) {
  std::string address = absl::StrCat("127.0.0.1:", FreePort());
  for (const auto& argv :
       std::vector<std::vector<std::string>>{{"get", "--address", address},
                                             {"describe", "JobSet/demo", "--address", address},
                                             {"gang", "p", "--address=" + address}}) {
    Result r = RunCli(argv);
    EXPECT_EQ(r.code, 1) << argv[0];
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith("error: workloadmapd at " + address + " is unavailable: "));
  }
  Result unix_socket = RunCli({"get", "--address", "unix:/nonexistent/wm.sock"});
  EXPECT_EQ(unix_socket.code, 1);
  EXPECT_THAT(unix_socket.err, HasSubstr("workloadmapd at unix:/nonexistent/wm.sock"));
}

TEST(WmctlLiveTest, UsageErrors) {
  for (const auto& argv :
       std::vector<std::vector<std::string>>{{"get", "-n", "a", "-A"},
                                             {"get", "JobSet", "--all-types"},
                                             {"get", "JobSet/demo", "-l", "a=b"},
                                             {"get", "a", "b", "c"},
                                             {"get", "--pod-limit", "1"},
                                             {"get", "--address", "nowhere"},
                                             {"describe", "JobSet"},
                                             {"describe", "JobSet/"},
                                             {"describe", "JobSet/demo", "-A"},
                                             {"describe", "JobSet/demo", "--definitions", "x"},
                                             {"describe", "JobSet/demo", "-o", "wide"},
                                             {"describe", "-f", "x", "-n", "default"},
                                             {"validate", "x", "--address", "127.0.0.1:1"},
                                             {"definitions", "--cluster", "c"},
                                             {"gang"},
                                             {"gang", "a", "b"},
                                             {"gang", "p", "-l", "a=b"}}) {
    Result r = RunCli(argv);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(argv, " ") << "\n" << r.err;
    EXPECT_THAT(r.err, StartsWith("error: ")) << absl::StrJoin(argv, " ");
  }
}

}  // namespace
}  // namespace wm::wmctl
