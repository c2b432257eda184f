#ifndef WM_INTEGRATION_TESTS_DAEMON_DAEMON_PROCESS_H_
#define WM_INTEGRATION_TESTS_DAEMON_DAEMON_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::testing {

// A workloadmapd process (the real binary) for end-to-end tests: started
// on a free port with the given flags, ready when it logs "ready".
class DaemonProcess {
 public:
  // `log_path`: where its stdout and stderr go, emptied at each Start;
  // empty for a new file in the test's temporary directory, removed with the
  // process unless the test has failed (then it is kept to be read).
  explicit DaemonProcess(std::vector<std::string> flags, std::string log_path = "");
  ~DaemonProcess();

  // Starts the binary and waits until it serves (health SERVING).
  absl::Status Start(absl::Duration timeout = absl::Seconds(60));
  // SIGTERM, then waits; returns the exit status (0 for a clean exit).
  int Stop(absl::Duration timeout = absl::Seconds(30));

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int metrics_port() const { return metrics_port_; }
  // The daemon's process id while it runs (for /proc/PID), else -1.
  pid_t pid() const { return pid_; }
  // Whether the process is still running (false once it has exited, say
  // crashed; then it is reaped and pid() is -1).
  bool Running();
  // How the process ended once Running() saw it exit ("exited with status
  // 1", "killed by signal 11 (Segmentation fault)"); empty before.
  const std::string& exit_description() const { return exit_description_; }
  const std::string& log_path() const { return log_path_; }
  std::string Log() const;
  workloadmap::v1::WorkloadMap::Stub& stub() { return *stub_; }

 private:
  std::vector<std::string> flags_;
  int port_ = 0;
  int metrics_port_ = 0;
  pid_t pid_ = -1;
  std::string log_path_;
  bool owns_log_ = false;  // log_path_ was made up here, so it is ours to remove
  std::string exit_description_;
  std::unique_ptr<workloadmap::v1::WorkloadMap::Stub> stub_;
};

// A loopback port nobody listens on right now.
int FreePort();

}  // namespace wm::testing

#endif  // WM_INTEGRATION_TESTS_DAEMON_DAEMON_PROCESS_H_
