#ifndef WM_CLIENT_WMCTL_LIVE_CLIENT_H_
#define WM_CLIENT_WMCTL_LIVE_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "workloadmap/v1/service.grpc.pb.h"

namespace wm::wmctl {

constexpr char kDefaultAddress[] = "127.0.0.1:50051";

// Empty when `address` is HOST:PORT or unix:PATH, else why it is not.
std::string CheckAddress(const std::string& address);

// How to reach workloadmapd. TLS applies to TCP addresses only (the daemon
// serves Unix sockets in plaintext).
struct Connection {
  std::string address = kDefaultAddress;
  bool tls = false;
  std::string tls_ca_file;    // empty: the system's roots
  std::string tls_cert_file;  // client certificate (mutual TLS), with key
  std::string tls_key_file;
  std::string tls_server_name;  // the name to verify instead of the host's
  // A file holding the bearer token sent with every call (a daemon run with
  // --authentication=kubernetes); empty: none.
  std::string token_file;
  absl::Duration deadline = absl::Seconds(10);
};

// A connection to workloadmapd; every call has the connection's deadline.
class LiveClient {
 public:
  // Reads the TLS files and the token file; InvalidArgument naming the file
  // that is missing, unreadable or (the token file) empty.
  static absl::StatusOr<std::unique_ptr<LiveClient>> Create(const Connection& connection);
  // A client of an in-process service (kubeconfig mode): its address is
  // empty.
  static std::unique_ptr<LiveClient> InProcess(std::shared_ptr<grpc::Channel> channel,
                                               absl::Duration deadline);

  const std::string& address() const { return connection_.address; }
  const Connection& connection() const { return connection_; }

  grpc::Status ResolveWorkload(const workloadmap::v1::ResolveWorkloadRequest& request,
                               workloadmap::v1::ResolveWorkloadResponse* response);
  // Every page of the listing (`request.page_token` is the start).
  grpc::Status ListAllWorkloads(workloadmap::v1::ListWorkloadsRequest request,
                                std::vector<workloadmap::v1::WorkloadSummary>* rows);
  grpc::Status GetGangInstructions(const workloadmap::v1::GetGangInstructionsRequest& request,
                                   workloadmap::v1::GetGangInstructionsResponse* response);
  grpc::Status ListDefinitions(const workloadmap::v1::ListDefinitionsRequest& request,
                               workloadmap::v1::ListDefinitionsResponse* response);
  grpc::Status ValidateDefinition(const workloadmap::v1::ValidateDefinitionRequest& request,
                                  workloadmap::v1::ValidateDefinitionResponse* response);

 private:
  LiveClient(Connection connection, std::string token, std::shared_ptr<grpc::Channel> channel);
  void Prepare(grpc::ClientContext& context) const;

  Connection connection_;
  std::string token_;  // read from connection_.token_file
  std::unique_ptr<workloadmap::v1::WorkloadMap::Stub> stub_;
};

// kli's exit code for a failed call: NOT_FOUND 3, FAILED_PRECONDITION "no
// definition ..." 4, INVALID_ARGUMENT 2, anything else 1.
int ExitCodeFor(const grpc::Status& status);

// The message printed after "error: ", naming the address when the daemon
// is unreachable, unavailable or too slow, and saying what to send when it
// refused the caller. An empty address is the in-process service of
// kubeconfig mode: its own message.
std::string ErrorMessageFor(const grpc::Status& status, const Connection& connection);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_LIVE_CLIENT_H_
