#include "client/wmctl/live_client.h"

#include <chrono>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace wm::wmctl {
namespace {

namespace v1 = ::workloadmap::v1;

constexpr auto kDeadline = std::chrono::seconds(10);
constexpr int kPageSize = 500;

}  // namespace

std::string DaemonAddress(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("WM_ADDRESS");
  if (env != nullptr && *env != '\0') return env;
  return kDefaultAddress;
}

std::string CheckAddress(const std::string& address) {
  std::string why = absl::StrCat("bad daemon address \"", address, "\" (HOST:PORT or unix:PATH)");
  if (absl::StartsWith(address, "unix:")) return address.size() > 5 ? "" : why;
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return why;
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port <= 0 || port > 65535) {
    return why;
  }
  return "";
}

LiveClient::LiveClient(std::string address)
    : address_(std::move(address)),
      stub_(v1::WorkloadMap::NewStub(
          grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()))) {}

void LiveClient::Prepare(grpc::ClientContext& context) const {
  context.set_deadline(std::chrono::system_clock::now() + kDeadline);
}

grpc::Status LiveClient::ResolveWorkload(const v1::ResolveWorkloadRequest& request,
                                         v1::ResolveWorkloadResponse* response) {
  grpc::ClientContext context;
  Prepare(context);
  return stub_->ResolveWorkload(&context, request, response);
}

grpc::Status LiveClient::ListAllWorkloads(v1::ListWorkloadsRequest request,
                                          std::vector<v1::WorkloadSummary>* rows) {
  request.set_page_size(kPageSize);
  while (true) {
    grpc::ClientContext context;
    Prepare(context);
    v1::ListWorkloadsResponse page;
    grpc::Status status = stub_->ListWorkloads(&context, request, &page);
    if (!status.ok()) return status;
    for (v1::WorkloadSummary& row : *page.mutable_workloads()) rows->push_back(std::move(row));
    // A token that does not move would page forever.
    if (page.next_page_token().empty() || page.next_page_token() == request.page_token()) {
      return grpc::Status::OK;
    }
    request.set_page_token(page.next_page_token());
  }
}

grpc::Status LiveClient::GetGangInstructions(const v1::GetGangInstructionsRequest& request,
                                             v1::GetGangInstructionsResponse* response) {
  grpc::ClientContext context;
  Prepare(context);
  return stub_->GetGangInstructions(&context, request, response);
}

int ExitCodeFor(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return 0;
    case grpc::StatusCode::NOT_FOUND:
      return 3;
    case grpc::StatusCode::FAILED_PRECONDITION:
      return absl::StrContains(status.error_message(), "no definition") ? 4 : 1;
    case grpc::StatusCode::INVALID_ARGUMENT:
      return 2;
    default:
      return 1;
  }
}

std::string ErrorMessageFor(const grpc::Status& status, const std::string& address) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::StrCat("workloadmapd at ", address, " is unavailable: ", status.error_message());
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::StrCat("workloadmapd at ", address, " did not answer within 10s");
    default:
      return status.error_message();
  }
}

}  // namespace wm::wmctl
