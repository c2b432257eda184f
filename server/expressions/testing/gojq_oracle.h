#ifndef WM_SERVER_EXPRESSIONS_TESTING_GOJQ_ORACLE_H_
#define WM_SERVER_EXPRESSIONS_TESTING_GOJQ_ORACLE_H_

// gojq, the engine of upstream Workload Map, as a reference for tests: a
// client of tools/gojq-oracle (built by scripts/build-gojq-oracle), which
// evaluates each expression exactly as upstream does (input numbers as
// float64, at most 999 outputs, 10 s per query).

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/common/json.h"

namespace wm::expressions::testing {

// The environment variable holding the oracle binary's path:
//   export WM_GOJQ_ORACLE=$(scripts/build-gojq-oracle)
inline constexpr char kGojqOracleEnv[] = "WM_GOJQ_ORACLE";

// $WM_GOJQ_ORACLE, or nullopt when it is unset or empty.
std::optional<std::string> GojqOraclePathFromEnv();

// What gojq made of one expression on one input: every output, or the
// stage that failed ("parse", "compile" or "run") and gojq's error text.
struct GojqResult {
  std::vector<Json> outputs;
  std::string error_stage;  // empty on success
  std::string error;

  bool ok() const { return error_stage.empty(); }
};

// One oracle process, started once and fed requests one at a time. Not
// thread-safe.
class GojqOracle {
 public:
  // Starts the binary at `path` (its stderr is this process's), with
  // `flags` (tools/gojq-oracle's: "-timeout=1s", "-max-results=N").
  static absl::StatusOr<std::unique_ptr<GojqOracle>> Start(
      const std::string& path, const std::vector<std::string>& flags = {});

  GojqOracle(const GojqOracle&) = delete;
  GojqOracle& operator=(const GojqOracle&) = delete;
  // Closes the oracle's stdin (it exits at the end of its input) and reaps it.
  ~GojqOracle();

  // Evaluates `expression` on `input`. A jq error is a GojqResult with an
  // error; a failed Status means the oracle itself failed (it exited, or
  // answered something that is not a response), after which every call
  // fails. Past `timeout` the oracle is killed and the call fails with
  // DEADLINE_EXCEEDED: gojq's own -timeout cannot stop a builtin that is
  // slow inside one step (a quadratic `indices`), and a fuzzer must not
  // wait for it.
  absl::StatusOr<GojqResult> Evaluate(absl::string_view expression, const Json& input,
                                      absl::Duration timeout = absl::InfiniteDuration());

 private:
  GojqOracle(pid_t pid, int fd) : pid_(pid), fd_(fd) {}

  absl::Status Send(const std::string& line);
  absl::StatusOr<std::string> ReceiveLine(absl::Time deadline);

  pid_t pid_;
  int fd_;              // the oracle's stdin and stdout (a socketpair)
  std::string buffer_;  // received bytes after the last complete line
};

}  // namespace wm::expressions::testing

#endif  // WM_SERVER_EXPRESSIONS_TESTING_GOJQ_ORACLE_H_
