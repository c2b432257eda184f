#include "integration_tests/daemon/daemon_process.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/common/file.h"

namespace wm::testing {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

DaemonProcess::DaemonProcess(std::vector<std::string> flags, std::string log_path)
    : flags_(std::move(flags)), log_path_(std::move(log_path)) {}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) Stop();
  if (owns_log_ && !::testing::Test::HasFailure()) unlink(log_path_.c_str());
}

std::string DaemonProcess::Log() const {
  // Empty until the daemon has written its first line.
  return ReadFileToString(log_path_).value_or("");
}

absl::Status DaemonProcess::Start(absl::Duration timeout) {
  port_ = FreePort();
  metrics_port_ = FreePort();
  static int started = 0;
  if (log_path_.empty()) {
    owns_log_ = true;
    log_path_ =
        absl::StrCat(::testing::TempDir(), "/workloadmapd-", getpid(), "-", ++started, ".log");
  }
  std::vector<std::string> args = {WM_BINARY_DIR "/bin/workloadmapd", "--listen", address(),
                                   "--metrics-address", absl::StrCat("127.0.0.1:", metrics_port_)};
  args.insert(args.end(), flags_.begin(), flags_.end());
  // The log is emptied here, before the child exists: the path may be a
  // stale one's (process ids wrap, and /tmp outlives test runs), and its
  // "ready" must never be read as this daemon's.
  const int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) return absl::InternalError(absl::StrCat("cannot create ", log_path_));
  pid_ = fork();
  if (pid_ == 0) {
    // A test that dies (a crash, a ctest timeout) takes its daemon along.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    dup2(log, 2);
    dup2(log, 1);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log);
  if (pid_ < 0) return absl::InternalError("fork failed");
  auto channel = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
  stub_ = workloadmap::v1::WorkloadMap::NewStub(channel);
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (absl::StrContains(Log(), " INFO ready ")) return absl::OkStatus();
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError("workloadmapd exited:\n" + Log());
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError("workloadmapd did not become ready:\n" + Log());
}

bool DaemonProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    exit_description_ = WIFEXITED(status) ? absl::StrCat("exited with status ", WEXITSTATUS(status))
                                          : absl::StrCat("killed by signal ", WTERMSIG(status),
                                                         " (", strsignal(WTERMSIG(status)), ")");
  }
  return pid_ > 0;
}

int DaemonProcess::Stop(absl::Duration timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (absl::Now() < deadline) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return -2;
}

}  // namespace wm::testing
