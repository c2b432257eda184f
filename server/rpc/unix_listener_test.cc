// Calls over a Unix socket the daemon accepts itself are authenticated by
// the peer process's uid or gid (SO_PEERCRED), over a real gRPC server and
// real sockets, with access reviewed by a scripted apiserver.
#include "server/rpc/unix_listener.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/access/access_reviewer.h"
#include "server/access/authenticator.h"
#include "server/access/testing/review_server.h"
#include "server/access/unix_peers.h"
#include "server/common/testing/scratch_dir.h"
#include "server/expressions/native_engine.h"
#include "server/index/testing/fake_cluster.h"
#include "server/rpc/testing/service_harness.h"

namespace wm::rpc {
namespace {

namespace v1 = ::workloadmap::v1;
using ::testing::HasSubstr;
using ::wm::index::testing::FakeCluster;

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

std::shared_ptr<const definitions::Registry> Catalog() {
  auto registry = std::make_shared<definitions::Registry>(Engine());
  EXPECT_TRUE(registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog).ok());
  return registry;
}

// An apiserver whose RBAC lets user "kai" get and list jobsets in namespace
// default, and nobody anything else. It knows no tokens.
Json KaiReadsDefault(const std::string&, const Json& review, int*) {
  const Json& spec = review["spec"];
  if (!spec.contains("resourceAttributes")) return {{"authenticated", false}};
  const Json& what = spec["resourceAttributes"];
  // value(), not []: a cluster-wide review has no namespace.
  std::string verb = what.value("verb", "");
  return {{"allowed", spec.value("user", "") == "kai" && (verb == "get" || verb == "list") &&
                          what.value("resource", "") == "jobsets" &&
                          what.value("namespace", "") == "default"}};
}

class UnixListenerTest : public ::testing::Test {
 protected:
  UnixListenerTest()
      : apiserver_(KaiReadsDefault),
        client_(apiserver_.Connection()),
        tokens_(client_, {}),
        access_(client_, {}),
        cluster_(Catalog()) {
    cluster_.SetResource("JobSet", "jobsets");
  }

  ~UnixListenerTest() override {
    if (listener_) listener_->Stop();
    harness_.reset();
  }

  // Serves the seed over TCP and over a Unix socket of our own, naming its
  // peers by `table` (every line one UnixPeerTable::Add takes).
  void Start(const std::vector<std::string>& table) {
    for (const std::string& line : table) ASSERT_TRUE(table_.Add(line).ok()) << line;
    authenticator_ = std::make_unique<access::Authenticator>(access::Authenticator::Options{
        .client_certificates = false, .tokens = &tokens_, .unix_peers = &table_});
    WorkloadMapService::Options options;
    options.authenticator = authenticator_.get();
    options.unix_peers = &peers_;
    options.access_reviewers[cluster_.name()] = &access_;
    options.audit = [this](const AuditEvent& event) {
      std::lock_guard lock(audit_mu_);
      audited_.push_back(absl::StrCat(event.method, " ", event.who ? event.who->user : "?", " ",
                                      absl::StatusCodeToString(event.status.code())));
    };
    harness_ = std::make_unique<testing::ServiceHarness>(std::vector<index::Cluster*>{&cluster_},
                                                         Engine(), options);
    ASSERT_TRUE(harness_->started());
    absl::Status seeded = index::testing::PutSeed(cluster_, harness_->index(), {"team-b"});
    ASSERT_TRUE(seeded.ok()) << seeded;
    absl::StatusOr<std::unique_ptr<UnixListener>> listener =
        UnixListener::Listen(socket_path(), 0660);
    ASSERT_TRUE(listener.ok()) << listener.status();
    listener_ = *std::move(listener);
    listener_->Serve(harness_->server(), peers_);
  }

  std::string socket_path() const { return scratch_.path() + "/workloadmapd.sock"; }

  // ResolveWorkload of the seed's JobSet over `channel`, sending no token.
  static grpc::Status Resolve(const std::shared_ptr<grpc::Channel>& channel,
                              const std::string& namespace_ = "default") {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::ResolveWorkloadRequest request;
    request.mutable_ref()->set_kind("JobSet");
    request.mutable_ref()->set_name("demo");
    request.mutable_ref()->set_namespace_(namespace_);
    v1::ResolveWorkloadResponse response;
    return v1::WorkloadMap::NewStub(channel)->ResolveWorkload(&context, request, &response);
  }

  std::shared_ptr<grpc::Channel> UnixChannel() const {
    return grpc::CreateChannel("unix:" + socket_path(), grpc::InsecureChannelCredentials());
  }

  std::vector<std::string> audited() {
    std::lock_guard lock(audit_mu_);
    return audited_;
  }

  wm::testing::ScratchDir scratch_;
  access::testing::ReviewServer apiserver_;
  kube::ApiClient client_;
  access::TokenReviewer tokens_;
  access::AccessReviewer access_;
  access::UnixPeerTable table_;
  std::unique_ptr<access::Authenticator> authenticator_;
  UnixPeerRegistry peers_;
  std::mutex audit_mu_;
  std::vector<std::string> audited_;  // "method user CODE"
  FakeCluster cluster_;
  std::unique_ptr<testing::ServiceHarness> harness_;
  std::unique_ptr<UnixListener> listener_;
};

TEST_F(UnixListenerTest, APeerIsTheUserItsUidIsMappedToAndRbacDecidesWhatItMayDo) {
  Start({absl::StrCat("uid:", ::getuid(), "=kai;schedulers")});
  grpc::Status status = Resolve(UnixChannel());
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(audited(), ::testing::Contains("ResolveWorkload kai OK"));
  // RBAC still decides: kai may not read team-b.
  status = Resolve(UnixChannel(), "team-b");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("\"kai\""));
  // Over TCP the same process is nobody: it sent no token.
  status = Resolve(harness_->channel());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
}

TEST_F(UnixListenerTest, AWatchOverTheSocketIsThePeersToo) {
  Start({absl::StrCat("uid:", ::getuid(), "=kai")});
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto reader = v1::WorkloadMap::NewStub(UnixChannel())
                    ->WatchWorkloads(&context, v1::WatchWorkloadsRequest());
  // The snapshot comes (a refused watch would end at once, UNAUTHENTICATED).
  v1::WorkloadEvent first;
  ASSERT_TRUE(reader->Read(&first)) << reader->Finish().error_message();
  EXPECT_EQ(first.workload().ref().name(), "demo");
  context.TryCancel();
  while (reader->Read(&first)) {
  }
  reader->Finish().IgnoreError();
}

TEST_F(UnixListenerTest, AGidNamesAPeerWhoseUidIsNotInTheTable) {
  Start({absl::StrCat("uid:", ::getuid() + 1, "=someone-else"),
         absl::StrCat("gid:", ::getgid(), "=kai")});
  grpc::Status status = Resolve(UnixChannel());
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(audited(), ::testing::Contains("ResolveWorkload kai OK"));
}

TEST_F(UnixListenerTest, APeerNotInTheTableIsUnauthenticatedSayingWhichUidItIs) {
  Start({absl::StrCat("uid:", ::getuid() + 1, "=kai")});
  grpc::Status status = Resolve(UnixChannel());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("(uid ", ::getuid(), ", gid ")));
}

// Descriptors are reused as connections come and go: every connection is
// named by its own peer, and a listener that stopped accepts no more.
TEST_F(UnixListenerTest, ManyConnectionsInTurnEachAuthenticateAndStopEndsAccepting) {
  Start({absl::StrCat("uid:", ::getuid(), "=kai")});
  struct stat info {};
  ASSERT_EQ(::stat(socket_path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0660u);
  for (int i = 0; i < 20; ++i) {
    grpc::ChannelArguments arguments;
    arguments.SetInt("wm-connection", i);  // a channel of its own, not a shared subchannel
    auto channel = grpc::CreateCustomChannel("unix:" + socket_path(),
                                             grpc::InsecureChannelCredentials(), arguments);
    grpc::Status status = Resolve(channel);
    ASSERT_TRUE(status.ok()) << i << ": " << status.error_message();
  }
  listener_->Stop();
  EXPECT_NE(::stat(socket_path().c_str(), &info), 0);  // the socket file is gone
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  v1::ListDefinitionsResponse response;
  grpc::Status status = v1::WorkloadMap::NewStub(UnixChannel())
                            ->ListDefinitions(&context, v1::ListDefinitionsRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
}

TEST(UnixListenerErrorsTest, APathThatCannotBeBoundIsAnErrorNamingIt) {
  absl::StatusOr<std::unique_ptr<UnixListener>> listener =
      UnixListener::Listen("/nonexistent-directory/workloadmapd.sock", 0660);
  EXPECT_TRUE(absl::IsUnavailable(listener.status())) << listener.status();
  EXPECT_THAT(listener.status().message(), HasSubstr("/nonexistent-directory/workloadmapd.sock"));
  listener = UnixListener::Listen(std::string(200, 'x'), 0660);
  EXPECT_TRUE(absl::IsInvalidArgument(listener.status())) << listener.status();
}

}  // namespace
}  // namespace wm::rpc
