#include "server/expressions/testing/gojq_oracle.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/common/json_reader.h"

namespace wm::expressions::testing {

std::optional<std::string> GojqOraclePathFromEnv() {
  const char* path = std::getenv(kGojqOracleEnv);
  if (path == nullptr || *path == '\0') return std::nullopt;
  return std::string(path);
}

absl::StatusOr<std::unique_ptr<GojqOracle>> GojqOracle::Start(
    const std::string& path, const std::vector<std::string>& flags) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  // The child's end becomes its stdin and stdout; dup2 clears close-on-exec.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  std::vector<char*> argv = {const_cast<char*>(path.c_str())};
  for (const std::string& flag : flags) argv.push_back(const_cast<char*>(flag.c_str()));
  argv.push_back(nullptr);
  char* envp[] = {nullptr};
  pid_t pid;
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return absl::FailedPreconditionError(absl::StrCat("cannot start the gojq oracle ", path, " (",
                                                      kGojqOracleEnv, "): ", std::strerror(rc)));
  }
  return std::unique_ptr<GojqOracle>(new GojqOracle(pid, fds[0]));
}

GojqOracle::~GojqOracle() {
  close(fd_);
  int status;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

absl::StatusOr<GojqResult> GojqOracle::Evaluate(absl::string_view expression, const Json& input,
                                                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  Json request = {{"expr", std::string(expression)}, {"input", input}};
  std::string line = request.dump(-1, ' ', false, Json::error_handler_t::replace);
  line.push_back('\n');
  if (absl::Status sent = Send(line); !sent.ok()) return sent;
  absl::StatusOr<std::string> response_line = ReceiveLine(deadline);
  if (!response_line.ok()) return response_line.status();
  // Outputs may nest as deep as gojq lets them; the bound only guards this
  // reader's own walk.
  absl::StatusOr<Json> response = ParseJson(*response_line, {.max_depth = 10000});
  if (!response.ok()) {
    return absl::InternalError(
        absl::StrCat("the gojq oracle answered no JSON: ", response.status().message()));
  }
  GojqResult result;
  if (auto outputs = response->find("outputs"); outputs != response->end() && outputs->is_array()) {
    result.outputs.assign(outputs->begin(), outputs->end());
    return result;
  }
  auto stage = response->find("stage");
  auto error = response->find("error");
  if (stage == response->end() || !stage->is_string() || error == response->end() ||
      !error->is_string()) {
    return absl::InternalError(
        absl::StrCat("the gojq oracle answered neither outputs nor an error: ", *response_line));
  }
  result.error_stage = stage->get<std::string>();
  result.error = error->get<std::string>();
  return result;
}

absl::Status GojqOracle::Send(const std::string& line) {
  const char* p = line.data();
  size_t n = line.size();
  while (n > 0) {
    ssize_t sent = send(fd_, p, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) {
      return absl::UnavailableError(
          absl::StrCat("the gojq oracle stopped reading: ", std::strerror(errno)));
    }
    p += sent;
    n -= sent;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GojqOracle::ReceiveLine(absl::Time deadline) {
  size_t scanned = 0;
  for (;;) {
    if (size_t end = buffer_.find('\n', scanned); end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return line;
    }
    scanned = buffer_.size();
    if (deadline != absl::InfiniteFuture()) {
      pollfd readable = {fd_, POLLIN, 0};
      int64_t wait_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
      int ready = wait_ms > 0 ? poll(&readable, 1, static_cast<int>(wait_ms)) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        // Killed, so that no later call reads this call's answer.
        kill(pid_, SIGKILL);
        shutdown(fd_, SHUT_RDWR);
        return absl::DeadlineExceededError("the gojq oracle did not answer in time; it was killed");
      }
    }
    char chunk[1 << 16];
    ssize_t got = recv(fd_, chunk, sizeof(chunk), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return absl::UnavailableError(
          "the gojq oracle exited before answering (its stderr says why)");
    }
    buffer_.append(chunk, got);
  }
}

}  // namespace wm::expressions::testing
