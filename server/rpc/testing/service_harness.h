#ifndef WM_SERVER_RPC_TESTING_SERVICE_HARNESS_H_
#define WM_SERVER_RPC_TESTING_SERVICE_HARNESS_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "server/expressions/engine.h"
#include "server/index/cluster.h"
#include "server/index/workload_index.h"
#include "server/rpc/service.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::rpc::testing {

// For tests and fuzzers of the service: a WorkloadIndex over `clusters`
// (which outlive the harness), the service over it (ready) on a real gRPC
// server listening on a loopback port, a channel to that port and one
// in-process, and a stub on the first. Records every finished call.
class ServiceHarness {
 public:
  struct Call {
    std::string method;
    grpc::StatusCode code;
  };

  ServiceHarness(const std::vector<index::Cluster*>& clusters, expressions::Engine& engine,
                 WorkloadMapService::Options options);
  ~ServiceHarness();
  ServiceHarness(const ServiceHarness&) = delete;
  ServiceHarness& operator=(const ServiceHarness&) = delete;

  // False when the server did not start (then nothing else is usable).
  bool started() const { return server_ != nullptr && port_ > 0; }

  index::WorkloadIndex& index() { return index_; }
  WorkloadMapService& service() { return *service_; }
  workloadmap::v1::WorkloadMap::Stub& stub() { return *stub_; }
  grpc::Server& server() { return *server_; }
  // A channel over the loopback port.
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  // A channel to the server without a socket (fast, for fuzzers).
  std::shared_ptr<grpc::Channel> InProcessChannel();
  std::vector<Call> calls() const;

 private:
  index::WorkloadIndex index_;
  std::unique_ptr<WorkloadMapService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<workloadmap::v1::WorkloadMap::Stub> stub_;
  mutable std::mutex mu_;
  std::vector<Call> calls_;
};

}  // namespace wm::rpc::testing

#endif  // WM_SERVER_RPC_TESTING_SERVICE_HARNESS_H_
