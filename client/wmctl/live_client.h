#ifndef WM_CLIENT_WMCTL_LIVE_CLIENT_H_
#define WM_CLIENT_WMCTL_LIVE_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::wmctl {

constexpr char kDefaultAddress[] = "127.0.0.1:50051";

// The daemon address: `flag` when set, else $WM_ADDRESS, else the default.
std::string DaemonAddress(const std::string& flag);

// Empty when `address` is HOST:PORT or unix:PATH, else why it is not.
std::string CheckAddress(const std::string& address);

// A plaintext connection to workloadmapd; every call has a 10 s deadline.
class LiveClient {
 public:
  explicit LiveClient(std::string address);

  const std::string& address() const { return address_; }

  grpc::Status ResolveWorkload(const workloadmap::v1::ResolveWorkloadRequest& request,
                               workloadmap::v1::ResolveWorkloadResponse* response);
  // Every page of the listing (`request.page_token` is the start).
  grpc::Status ListAllWorkloads(workloadmap::v1::ListWorkloadsRequest request,
                                std::vector<workloadmap::v1::WorkloadSummary>* rows);
  grpc::Status GetGangInstructions(const workloadmap::v1::GetGangInstructionsRequest& request,
                                   workloadmap::v1::GetGangInstructionsResponse* response);

 private:
  void Prepare(grpc::ClientContext& context) const;

  std::string address_;
  std::unique_ptr<workloadmap::v1::WorkloadMap::Stub> stub_;
};

// kli's exit code for a failed call: NOT_FOUND 3, FAILED_PRECONDITION "no
// definition ..." 4, INVALID_ARGUMENT 2, anything else 1.
int ExitCodeFor(const grpc::Status& status);

// The message printed after "error: ", naming the address when the daemon
// is unreachable, unavailable or too slow.
std::string ErrorMessageFor(const grpc::Status& status, const std::string& address);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_LIVE_CLIENT_H_
