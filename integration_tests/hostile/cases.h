#ifndef WM_INTEGRATION_TESTS_HOSTILE_CASES_H_
#define WM_INTEGRATION_TESTS_HOSTILE_CASES_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace wm::hostile {

// One hostile request to one RPC and the answer it must get.
struct RpcCase {
  std::string name;
  // A method of workloadmap.v1.WorkloadMap: "ResolveWorkload", ...
  std::string method;
  // The raw bytes of the request message.
  std::string request;
  // Any of these codes is right.
  std::vector<grpc::StatusCode> codes;
  // What the answer must contain: the field at fault, in the error message
  // (or, for an OK answer, in the serialized response: findings' text).
  std::string mention;
  // The answer must come within this long.
  absl::Duration bound = absl::Seconds(3);
};

// The workloads the hostile definitions (definitions.yaml, given to the
// daemon with --definitions) cover: evaluating their status expressions
// exhausts the evaluation budget or memory.
constexpr char kHostileDefinitionsFile[] = "integration_tests/hostile/definitions.yaml";

// Every RPC case: malformed, oversized, deeply nested, non-UTF-8,
// out-of-range and adversarial requests. `seed_jobset_json` is the seed's
// running JobSet (default/demo), the base of the inline objects.
std::vector<RpcCase> RpcCases(const std::string& seed_jobset_json);

// One hostile request to the metrics port and the statuses it may get.
struct HttpCase {
  std::string name;
  std::string request;
  std::vector<int> statuses;
  absl::Duration bound = absl::Seconds(2);
};

std::vector<HttpCase> HttpCases();

}  // namespace wm::hostile

#endif  // WM_INTEGRATION_TESTS_HOSTILE_CASES_H_
