#include "server/kube/auth/internal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace wm::kube::internal {
namespace {

absl::Status ErrnoError(int error_number, absl::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat(what, ": ", std::strerror(error_number)));
}

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  int* receive() { return &fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Reaps `pid` (blocking), retrying on EINTR.
int Reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void KillGroup(pid_t pid) {
  // The child leads its own group; this also reaches what it forked.
  if (kill(-pid, SIGKILL) != 0) kill(pid, SIGKILL);
}

}  // namespace

std::string ResolvePath(absl::string_view dir, absl::string_view path) {
  if (path.empty() || path.front() == '/' || dir.empty()) return std::string(path);
  if (dir.back() == '/') return absl::StrCat(dir, path);
  return absl::StrCat(dir, "/", path);
}

absl::StatusOr<ProcessResult> RunProcess(const std::string& executable,
                                         const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env,
                                         const ProcessLimits& limits) {
  Fd out_read, out_write, err_read, err_write;
  {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(errno, "pipe");
    *out_read.receive() = fds[0];
    *out_write.receive() = fds[1];
    if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(errno, "pipe");
    *err_read.receive() = fds[0];
    *err_write.receive() = fds[1];
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // dup2 clears close-on-exec on the child's copies.
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes, &signals);
  // Dispositions a daemon commonly changes (SIGPIPE ignored, ...) are reset.
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM}) {
    sigaddset(&signals, s);
  }
  posix_spawnattr_setsigdefault(&attributes, &signals);

  std::vector<char*> c_argv;
  for (const std::string& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  std::vector<char*> c_env;
  for (const std::string& e : env) c_env.push_back(const_cast<char*>(e.c_str()));
  c_env.push_back(nullptr);

  pid_t pid = 0;
  int spawn_error =
      posix_spawn(&pid, executable.c_str(), &actions, &attributes, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) return ErrnoError(spawn_error, absl::StrCat("cannot run ", executable));
  out_write.Reset();
  err_write.Reset();

  ProcessResult result;
  const absl::Time deadline = absl::Now() + limits.timeout;
  bool out_open = true, err_open = true;
  char buffer[16384];
  while (out_open || err_open) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      KillGroup(pid);
      Reap(pid);
      return absl::DeadlineExceededError(absl::StrCat(executable, " did not finish within ",
                                                      absl::FormatDuration(limits.timeout),
                                                      " and was killed"));
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (out_open) fds[n++] = {out_read.get(), POLLIN, 0};
    if (err_open) fds[n++] = {err_read.get(), POLLIN, 0};
    int ready = poll(fds, n, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      int error_number = errno;
      KillGroup(pid);
      Reap(pid);
      return ErrnoError(error_number, "poll");
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      bool is_out = fds[i].fd == out_read.get();
      ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        (is_out ? out_open : err_open) = false;
        continue;
      }
      if (is_out) {
        result.out.append(buffer, static_cast<size_t>(got));
        if (result.out.size() > limits.max_out) {
          KillGroup(pid);
          Reap(pid);
          return absl::ResourceExhaustedError(
              absl::StrCat(executable, " wrote more than ", limits.max_out, " bytes to stdout"));
        }
      } else if (result.err.size() < limits.max_err) {
        result.err.append(buffer,
                          std::min(static_cast<size_t>(got), limits.max_err - result.err.size()));
      }
    }
  }

  // Both pipes are closed; the child is normally exiting. Wait for it, but
  // not past the deadline.
  while (true) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      result.exited = WIFEXITED(status);
      if (result.exited) {
        result.exit_code = WEXITSTATUS(status);
      } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
      }
      return result;
    }
    if (done < 0 && errno != EINTR) return ErrnoError(errno, "waitpid");
    if (absl::Now() >= deadline) {
      KillGroup(pid);
      Reap(pid);
      return absl::DeadlineExceededError(absl::StrCat(executable, " did not finish within ",
                                                      absl::FormatDuration(limits.timeout),
                                                      " and was killed"));
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
}

}  // namespace wm::kube::internal
