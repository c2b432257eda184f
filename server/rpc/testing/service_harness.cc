#include "server/rpc/testing/service_harness.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace wm::rpc::testing {

using ::wm::index::Cluster;
using ::wm::index::WorkloadIndex;

ServiceHarness::ServiceHarness(const std::vector<Cluster*>& clusters, expressions::Engine& engine,
                               WorkloadMapService::Options options)
    : index_(engine, WorkloadIndex::Options{}) {
  for (Cluster* c : clusters) index_.AddCluster(c);
  index_.Start();
  service_ = std::make_unique<WorkloadMapService>(
      index_, engine, options, [this](const char* method, grpc::StatusCode code, absl::Duration) {
        std::unique_lock lock(mu_);
        calls_.push_back({method, code});
      });
  service_->SetReady(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!started()) return;
  channel_ =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials());
  stub_ = workloadmap::v1::WorkloadMap::NewStub(channel_);
}

ServiceHarness::~ServiceHarness() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server_.reset();
  service_.reset();
  index_.Stop();
}

std::shared_ptr<grpc::Channel> ServiceHarness::InProcessChannel() {
  return server_->InProcessChannel(grpc::ChannelArguments());
}

std::vector<ServiceHarness::Call> ServiceHarness::calls() const {
  std::unique_lock lock(mu_);
  return calls_;
}

}  // namespace wm::rpc::testing
