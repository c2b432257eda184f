#include "client/wmctl/live_client.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/common/file.h"

namespace wm::wmctl {
namespace {

namespace v1 = ::workloadmap::v1;

constexpr int kPageSize = 500;

// The whole file a flag names (a PEM file, a token).
absl::StatusOr<std::string> ReadFlagFile(const std::string& flag, const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        FileErrorAs(text.status(), absl::StrCat(flag, ": cannot read"), path).message());
  }
  return text;
}

}  // namespace

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

absl::StatusOr<std::unique_ptr<LiveClient>> LiveClient::Create(const Connection& connection) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  grpc::ChannelArguments arguments;
  if (connection.tls && !absl::StartsWith(connection.address, "unix:")) {
    grpc::SslCredentialsOptions ssl;
    if (!connection.tls_ca_file.empty()) {
      auto ca = ReadFlagFile("--tls-ca", connection.tls_ca_file);
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *std::move(ca);
    }
    if (!connection.tls_cert_file.empty()) {
      auto cert = ReadFlagFile("--tls-cert", connection.tls_cert_file);
      if (!cert.ok()) return cert.status();
      auto key = ReadFlagFile("--tls-key", connection.tls_key_file);
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *std::move(cert);
      ssl.pem_private_key = *std::move(key);
    }
    credentials = grpc::SslCredentials(ssl);
    if (!connection.tls_server_name.empty()) {
      arguments.SetSslTargetNameOverride(connection.tls_server_name);
    }
  }
  std::string token;
  if (!connection.token_file.empty()) {
    auto read = ReadFlagFile("--token-file", connection.token_file);
    if (!read.ok()) return read.status();
    token = std::string(absl::StripAsciiWhitespace(*read));
    if (token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file: ", connection.token_file, " is empty"));
    }
  }
  auto channel = grpc::CreateCustomChannel(connection.address, credentials, arguments);
  return std::unique_ptr<LiveClient>(
      new LiveClient(connection, std::move(token), std::move(channel)));
}

std::unique_ptr<LiveClient> LiveClient::InProcess(std::shared_ptr<grpc::Channel> channel,
                                                  absl::Duration deadline) {
  Connection connection;
  connection.address.clear();
  connection.deadline = deadline;
  return std::unique_ptr<LiveClient>(new LiveClient(std::move(connection), "", std::move(channel)));
}

LiveClient::LiveClient(Connection connection, std::string token,
                       std::shared_ptr<grpc::Channel> channel)
    : connection_(std::move(connection)),
      token_(std::move(token)),
      stub_(v1::WorkloadMap::NewStub(channel)) {}

void LiveClient::Prepare(grpc::ClientContext& context) const {
  if (!token_.empty()) context.AddMetadata("authorization", "Bearer " + token_);
  if (connection_.deadline == absl::InfiniteDuration()) return;  // --request-timeout 0
  context.set_deadline(absl::ToChronoTime(absl::Now() + connection_.deadline));
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

grpc::Status LiveClient::ListDefinitions(const v1::ListDefinitionsRequest& request,
                                         v1::ListDefinitionsResponse* response) {
  grpc::ClientContext context;
  Prepare(context);
  return stub_->ListDefinitions(&context, request, response);
}

grpc::Status LiveClient::ValidateDefinition(const v1::ValidateDefinitionRequest& request,
                                            v1::ValidateDefinitionResponse* response) {
  grpc::ClientContext context;
  Prepare(context);
  return stub_->ValidateDefinition(&context, request, response);
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

std::string ErrorMessageFor(const grpc::Status& status, const Connection& connection) {
  const std::string& address = connection.address;
  const absl::Duration deadline = connection.deadline;
  if (address.empty()) {
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return absl::StrCat("no answer within ", absl::FormatDuration(deadline),
                          " (--request-timeout)");
    }
    return status.error_message();
  }
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return absl::StrCat("workloadmapd at ", address, " is unavailable: ", status.error_message());
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::StrCat("workloadmapd at ", address, " did not answer within ",
                          absl::FormatDuration(deadline));
    case grpc::StatusCode::UNAUTHENTICATED:
      return absl::StrCat(
          "workloadmapd at ", address, " did not accept the caller: ", status.error_message(),
          connection.token_file.empty()
              ? " (it authenticates callers: pass --token-file with a token it accepts, e.g. from "
                "kubectl create token SERVICEACCOUNT --audience=workloadmap)"
              : absl::StrCat(" (the token of --token-file ", connection.token_file, ")"));
    case grpc::StatusCode::PERMISSION_DENIED:
      return absl::StrCat(
          "workloadmapd at ", address, " refused: ", status.error_message(),
          " (ask for that RBAC permission; kubectl auth can-i tells what you have)");
    default:
      return status.error_message();
  }
}

}  // namespace wm::wmctl
