#ifndef WM_INTEGRATION_TESTS_HOSTILE_CASES_H_
#define WM_INTEGRATION_TESTS_HOSTILE_CASES_H_

// The hostile-input cases of issue 12, as data (library wm_hostile_cases):
// malformed, oversized, deeply nested, non-UTF-8, out-of-range and
// adversarial requests to every RPC of workloadmapd and to its HTTP port,
// each with the answer it must get. The hostile-input suite
// (hostile_test.cc) checks each answer against a real daemon; a load
// generator may send them round-robin to soak one (the answers it gets
// are then what the cases say, so it can count wrong ones).
//
// The daemon the cases are meant for serves, in snapshot mode, the seed
// cluster state (integration_tests/seed/cluster-state.yaml, whose running
// JobSet default/demo asks for 12 GPUs) with the definitions of
// kHostileDefinitionsFile as well as the catalog:
//
//   workloadmapd --snapshot DIR_WITH_THE_SEED
//                --definitions integration_tests/hostile/definitions.yaml
//
// Cases are independent of each other and of their order, and leave the
// daemon's state as it was (none applies a mutation), so any subset may be
// sent any number of times, concurrently.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "integration_tests/hostile/raw_clients.h"

namespace wm::hostile {

// One hostile gRPC call and the answer it must get.
struct HostileCase {
  // "<Method>/<what is wrong>", unique: "ResolveWorkload/inline_pod_nested".
  std::string name;
  // The full method path, as CallRaw takes it:
  // "/workloadmap.v1.WorkloadMap/ResolveWorkload". WatchWorkloads is
  // server-streaming: read one answer (or the status) and cancel.
  std::string method;
  // The raw bytes of the one request message: not always a valid message
  // (garbage, truncated fields, strings that are not UTF-8).
  std::string request;
  // Metadata the call carries (keys and values gRPC's client accepts).
  Metadata metadata;
  // Any of these status codes is a right answer.
  std::vector<grpc::StatusCode> codes;
  // Text the answer must contain, unless empty: for an error, in its
  // message (the field at fault, or what was wrong); for an OK answer, in
  // the serialized response message(s).
  std::string mention;
  // The answer must come within this long on a loaded machine. It is there
  // to catch a hang (an unbounded evaluation, a stuck thread), not to
  // measure speed: well above the daemon's own budgets.
  absl::Duration bound;
};

// The workloads the hostile definitions (definitions.yaml, given to the
// daemon with --definitions) cover: evaluating their status expressions
// exhausts the evaluation budget or memory. Relative to the source tree.
constexpr char kHostileDefinitionsFile[] = "integration_tests/hostile/definitions.yaml";
// The seed the daemon serves, relative to the source tree.
constexpr char kSeedFile[] = "integration_tests/seed/cluster-state.yaml";

// The seed's running JobSet default/demo as JSON (read from the source
// tree this library was built from), the base of the inline objects.
const std::string& SeedJobSetJson();

// Every gRPC case, in a fixed order (by issue-12 class), built from
// SeedJobSetJson(). Building them allocates about 30 MiB (the largest
// requests are 17 MiB and 5 MB): build once and reuse.
std::vector<HostileCase> AllCases();

// One hostile request to the metrics (HTTP) port and the statuses it may
// get. `request` is sent verbatim on a new connection; the reply's status
// line must carry one of `statuses`, within `bound` (as above: a hang
// bound, not a speed bound).
struct HttpCase {
  std::string name;
  std::string request;
  std::vector<int> statuses;
  absl::Duration bound;
};

std::vector<HttpCase> HttpCases();

}  // namespace wm::hostile

#endif  // WM_INTEGRATION_TESTS_HOSTILE_CASES_H_
