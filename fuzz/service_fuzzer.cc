// Feeds arbitrary bytes to the workloadmap.v1 service handlers in-process:
// the input picks a method, gives the call's metadata and is the raw
// request message, sent through a generic stub over an in-process channel
// to the service over the seed snapshot with the catalog's definitions.
// Every call must end with a valid gRPC status within its deadline, and the
// service must still resolve the seed JobSet afterwards.
//
// Input layout: byte 0 selects the method; byte 1 is the metadata length
// N; the next N bytes are metadata ("key=value" lines, made valid for gRPC);
// the rest is the request message.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "catalog/catalog.h"
#include "integration_tests/hostile/raw_clients.h"
#include "server/definitions/registry.h"
#include "server/expressions/jq_engine.h"
#include "server/index/snapshot_cluster.h"
#include "server/rpc/testing/service_harness.h"
#include "workloadmap/v1/service.pb.h"

namespace {

namespace v1 = workloadmap::v1;

constexpr const char* kMethods[] = {
    "ResolveWorkload", "ListWorkloads",   "MutatePodSpecs",     "GetGangInstructions",
    "WatchWorkloads",  "ListDefinitions", "ValidateDefinition",
};
// Long enough for a resolve over the seed, short enough for many runs.
constexpr absl::Duration kDeadline = absl::Milliseconds(1500);

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "service_fuzzer: %s\n", why.c_str());
  abort();
}

struct Server {
  std::unique_ptr<wm::expressions::Engine> engine;
  std::unique_ptr<wm::index::SnapshotCluster> snapshot;
  std::unique_ptr<wm::rpc::testing::ServiceHarness> harness;
  std::shared_ptr<grpc::Channel> channel;
};

Server& TheServer() {
  static Server* server = [] {
    auto* s = new Server;
    wm::expressions::JqEngineOptions options;
    options.workers = 2;
    options.limits.budget = absl::Milliseconds(500);
    options.memory_limit_bytes = int64_t{512} << 20;
    s->engine = wm::expressions::NewJqEngine(options).value();
    auto registry = std::make_shared<wm::definitions::Registry>(*s->engine);
    absl::Status added =
        registry->AddDocuments(wm::BuiltinCatalog(), wm::definitions::Origin::kCatalog);
    if (!added.ok()) Die(added.ToString());
    // The seed's running state alone (the seed directory also holds the
    // unstarted JobSet of the same name).
    std::string dir =
        absl::StrCat(std::filesystem::temp_directory_path().string(), "/service_fuzzer-", getpid());
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(WM_SOURCE_DIR "/integration_tests/seed/cluster-state.yaml",
                               dir + "/cluster-state.yaml",
                               std::filesystem::copy_options::overwrite_existing);
    auto snapshot = wm::index::SnapshotCluster::Load(dir, registry);
    if (!snapshot.ok()) Die(snapshot.status().ToString());
    s->snapshot = *std::move(snapshot);
    s->harness = std::make_unique<wm::rpc::testing::ServiceHarness>(
        std::vector<wm::index::Cluster*>{s->snapshot.get()}, *s->engine,
        wm::rpc::WorkloadMapService::Options{});
    if (!s->harness->started()) Die("the server did not start");
    s->snapshot->Feed(s->harness->index());
    s->harness->index().WaitForIdle();
    s->channel = s->harness->InProcessChannel();
    return s;
  }();
  return *server;
}

// Metadata from arbitrary bytes: keys mapped onto gRPC's key alphabet
// (lowercase, digits, "-_."), never reserved ("grpc-" or pseudo-headers);
// values of "-bin" keys kept as bytes, others mapped onto printable ASCII.
wm::hostile::Metadata MetadataFrom(const std::string& bytes) {
  static constexpr char kKeyAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789-_.";
  wm::hostile::Metadata metadata;
  for (absl::string_view line : absl::StrSplit(bytes, '\n')) {
    size_t equals = line.find('=');
    if (equals == absl::string_view::npos || equals == 0) continue;
    std::string key;
    for (char c : line.substr(0, equals)) {
      key += kKeyAlphabet[static_cast<unsigned char>(c) % (sizeof(kKeyAlphabet) - 1)];
    }
    if (key.rfind("grpc-", 0) == 0) key = "x-" + key;
    std::string value(line.substr(equals + 1));
    if (key.size() < 4 || key.compare(key.size() - 4, 4, "-bin") != 0) {
      for (char& c : value) c = static_cast<char>(0x20 + static_cast<unsigned char>(c) % 95);
    }
    metadata.emplace_back(std::move(key), std::move(value));
  }
  return metadata;
}

void ExpectValid(const grpc::Status& status, const char* method) {
  int code = status.error_code();
  if (code < grpc::StatusCode::OK || code > grpc::StatusCode::UNAUTHENTICATED) {
    Die(absl::StrCat(method, " ended with status code ", code));
  }
}

// The service still resolves the seed JobSet by reference.
void ExpectStillAnswers(Server& server) {
  v1::ResolveWorkloadRequest request;
  request.mutable_ref()->set_kind("JobSet");
  request.mutable_ref()->set_namespace_("default");
  request.mutable_ref()->set_name("demo");
  wm::hostile::RpcResult result =
      wm::hostile::CallRaw(server.channel, "/workloadmap.v1.WorkloadMap/ResolveWorkload",
                           request.SerializeAsString(), absl::Seconds(10));
  v1::ResolveWorkloadResponse response;
  if (!result.status.ok() || result.responses.size() != 1 ||
      !response.ParseFromString(result.responses[0]) ||
      response.workload().ref().name() != "demo") {
    Die(absl::StrCat("the seed JobSet no longer resolves: ", result.status.error_message()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > (1 << 20)) return 0;
  Server& server = TheServer();
  const char* method = kMethods[data[0] % std::size(kMethods)];
  size_t metadata_size = std::min<size_t>(data[1], size - 2);
  std::string metadata(reinterpret_cast<const char*>(data) + 2, metadata_size);
  std::string message(reinterpret_cast<const char*>(data) + 2 + metadata_size,
                      size - 2 - metadata_size);
  wm::hostile::RpcResult result = wm::hostile::CallRaw(
      server.channel, absl::StrCat("/workloadmap.v1.WorkloadMap/", method), message, kDeadline,
      /*max_responses=*/4, MetadataFrom(metadata));
  ExpectValid(result.status, method);
  ExpectStillAnswers(server);
  return 0;
}
