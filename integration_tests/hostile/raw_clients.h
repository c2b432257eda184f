#ifndef WM_INTEGRATION_TESTS_HOSTILE_RAW_CLIENTS_H_
#define WM_INTEGRATION_TESTS_HOSTILE_RAW_CLIENTS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace wm::hostile {

// What one gRPC call answered, and how long it took.
struct RpcResult {
  grpc::Status status;
  std::vector<std::string> responses;  // serialized messages, in order
  absl::Duration elapsed;
};

// Calls `method` ("/workloadmap.v1.WorkloadMap/ResolveWorkload") with
// `request` as the raw bytes of its one request message, so a test can send
// what no typed stub would (garbage, invalid UTF-8 in string fields). Works
// for unary and server-streaming methods alike: reads up to `max_responses`
// answers (a stream is then cancelled when `max_responses` > 1). The call carries `deadline` and
// `metadata` (keys and values gRPC accepts: the caller makes them so).
using Metadata = std::vector<std::pair<std::string, std::string>>;
RpcResult CallRaw(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                  const std::string& request, absl::Duration deadline, int max_responses = 1,
                  const Metadata& metadata = {});

// What one HTTP exchange got: the status code of the response line (0 when
// none came: the server closed or the deadline passed) and the whole reply.
struct HttpResult {
  int status = 0;
  std::string reply;
  absl::Duration elapsed;
};

// Sends `request` verbatim on a new connection to 127.0.0.1:`port` and
// reads the reply until the server closes or `deadline` passes.
HttpResult ExchangeHttp(int port, const std::string& request, absl::Duration deadline);

// A connection to 127.0.0.1:`port` that sends `prefix` and then nothing, to
// hold one of the server's connection slots; closed when destroyed.
class IdleConnection {
 public:
  IdleConnection(int port, const std::string& prefix);
  ~IdleConnection();
  IdleConnection(const IdleConnection&) = delete;
  IdleConnection& operator=(const IdleConnection&) = delete;
  bool connected() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace wm::hostile

#endif  // WM_INTEGRATION_TESTS_HOSTILE_RAW_CLIENTS_H_
