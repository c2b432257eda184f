// The HTTP API end to end in one process: a real HttpServer, the HttpApi, the
// real gRPC service over a fake cluster holding the seed, with access
// control decided by a scripted apiserver.
#include "server/web/http_api.h"

#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/access/access_reviewer.h"
#include "server/access/authenticator.h"
#include "server/access/testing/review_server.h"
#include "server/access/token_reviewer.h"
#include "server/common/json.h"
#include "server/expressions/native_engine.h"
#include "server/index/testing/fake_cluster.h"
#include "server/observability/testing/loopback_client.h"
#include "server/rpc/testing/service_harness.h"

namespace wm::web {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::wm::index::testing::FakeCluster;
using ::wm::observability::testing::ReadUntil;

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

std::shared_ptr<const definitions::Registry> Catalog() {
  auto registry = std::make_shared<definitions::Registry>(Engine());
  EXPECT_TRUE(registry->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog).ok());
  return registry;
}

// "admin-token" may do anything; "intern-token" nothing; other tokens are
// not accepted.
Json Decide(const std::string& path, const Json& review, int*) {
  if (path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
    return {{"allowed", review["spec"]["user"] == "admin"}};
  }
  const Json& token = review["spec"]["token"];
  if (token == "admin-token") return {{"authenticated", true}, {"user", {{"username", "admin"}}}};
  if (token == "intern-token") return {{"authenticated", true}, {"user", {{"username", "intern"}}}};
  return {{"authenticated", false}, {"error", "invalid bearer token"}};
}

struct Answer {
  int status = 0;
  std::string head;
  std::string body;
  Json json() const { return Json::parse(body); }
};

class HttpApiTest : public ::testing::Test {
 protected:
  HttpApiTest()
      : apiserver_(Decide),
        client_(apiserver_.Connection()),
        tokens_(client_, {}),
        authenticator_({.tokens = &tokens_}),
        access_(client_, {}),
        cluster_(Catalog()) {
    cluster_.SetResource("JobSet", "jobsets");
    rpc::WorkloadMapService::Options options;
    options.authenticator = &authenticator_;
    options.access_reviewers[cluster_.name()] = &access_;
    harness_ = std::make_unique<rpc::testing::ServiceHarness>(
        std::vector<index::Cluster*>{&cluster_}, Engine(), options);
    EXPECT_TRUE(harness_->started());
    absl::Status seeded = index::testing::PutSeed(cluster_, harness_->index());
    EXPECT_TRUE(seeded.ok()) << seeded;
    api_ = std::make_unique<HttpApi>(harness_->channel(), HttpApi::Options());
    api_->Register(http_);
    EXPECT_TRUE(http_.Start("127.0.0.1:0").ok());
  }
  ~HttpApiTest() override { http_.Stop(); }

  // Sends GET `target` with `token` (none when empty) and reads the answer.
  Answer Get(const std::string& target, const std::string& token = "admin-token") {
    int fd = observability::testing::ConnectLoopback(http_.port());
    std::string request = absl::StrCat("GET ", target, " HTTP/1.1\r\n");
    if (!token.empty()) absl::StrAppend(&request, "Authorization: Bearer ", token, "\r\n");
    request += "\r\n";
    EXPECT_TRUE(observability::testing::SendAll(fd, request));
    std::string raw = ReadUntil(fd);
    ::close(fd);
    Answer answer;
    size_t end = raw.find("\r\n\r\n");
    if (end == std::string::npos || raw.size() < 12) return answer;
    answer.status = std::stoi(raw.substr(9, 3));
    answer.head = raw.substr(0, end);
    answer.body = raw.substr(end + 4);
    return answer;
  }

  // Opens the event stream; the caller reads and closes the descriptor.
  int OpenEvents(const std::string& query, const std::string& last_event_id = "") {
    int fd = observability::testing::ConnectLoopback(http_.port());
    std::string request = absl::StrCat("GET /api/v1/events", query,
                                       " HTTP/1.1\r\nAuthorization: Bearer admin-token\r\n");
    if (!last_event_id.empty()) absl::StrAppend(&request, "Last-Event-ID: ", last_event_id, "\r\n");
    request += "\r\n";
    EXPECT_TRUE(observability::testing::SendAll(fd, request));
    return fd;
  }

  // The seed JobSet at a new resourceVersion (a MODIFIED event: the view
  // carries it).
  void TouchDemo(const std::string& resource_version) {
    Json demo = *cluster_.view()
                     .StoreFor({"jobset.x-k8s.io", "v1alpha2", "JobSet"})
                     ->Get("default/demo")
                     ->Document();
    demo["metadata"]["resourceVersion"] = resource_version;
    cluster_.Put(harness_->index(), demo);
  }

  access::testing::ReviewServer apiserver_;
  kube::ApiClient client_;
  access::TokenReviewer tokens_;
  access::Authenticator authenticator_;
  access::AccessReviewer access_;
  FakeCluster cluster_;
  std::unique_ptr<rpc::testing::ServiceHarness> harness_;
  std::unique_ptr<HttpApi> api_;
  observability::HttpServer http_;
};

TEST_F(HttpApiTest, ListsWorkloadsInProtobufJsonWithDefaultsPrinted) {
  Answer answer = Get("/api/v1/workloads?namespace=default&kind=JobSet");
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.head, HasSubstr("Content-Type: application/json"));
  EXPECT_THAT(answer.head, HasSubstr("Cache-Control: no-store"));
  Json list = answer.json();
  ASSERT_EQ(list["workloads"].size(), 1u) << answer.body;
  const Json& demo = list["workloads"][0];
  EXPECT_EQ(demo["ref"]["name"], "demo");
  EXPECT_EQ(demo["matchedStatuses"], Json::array({"Running"})) << answer.body;
  EXPECT_EQ(demo["components"][1]["instanceId"], "worker");
  EXPECT_EQ(demo["components"][1]["replicas"]["ready"], 2);
  EXPECT_EQ(demo["gpus"], "12");  // int64: a string, as protobuf's JSON mapping has it
  EXPECT_EQ(demo["error"], "");   // a default value, printed
  EXPECT_EQ(list["filtered"], false);
  EXPECT_TRUE(list["revision"].is_string());
}

TEST_F(HttpApiTest, ResolvesOneWorkloadWithPodsAndItsGang) {
  Answer answer = Get("/api/v1/namespaces/default/workloads/JobSet/demo?includePods=true");
  ASSERT_EQ(answer.status, 200) << answer.body;
  Json workload = answer.json()["workload"];
  EXPECT_EQ(workload["ref"]["name"], "demo");
  EXPECT_EQ(workload["definition"]["name"].get<std::string>().empty(), false);
  EXPECT_THAT(answer.body, HasSubstr("\"pods\":[{"));
  EXPECT_THAT(answer.body, HasSubstr("\"instanceId\""));

  Answer by_resource =
      Get("/api/v1/namespaces/default/workloads/jobsets/demo?group=jobset.x-k8s.io");
  EXPECT_EQ(by_resource.status, 200) << by_resource.body;

  Answer gang = Get("/api/v1/namespaces/default/workloads/JobSet/demo/gang");
  ASSERT_EQ(gang.status, 200) << gang.body;
  EXPECT_GE(gang.json()["gang"]["podGroups"].size(), 1u) << gang.body;
}

TEST_F(HttpApiTest, ListsDefinitions) {
  Answer answer = Get("/api/v1/definitions");
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_GT(answer.json()["definitions"].size(), 10u);
  EXPECT_TRUE(answer.json()["rejected"].is_array());
}

TEST_F(HttpApiTest, ErrorsCarryTheirHttpStatusAndGooglesErrorShape) {
  Answer missing = Get("/api/v1/namespaces/default/workloads/JobSet/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.json()["error"]["status"], "NOT_FOUND");
  EXPECT_EQ(missing.json()["error"]["code"], 404);
  EXPECT_THAT(missing.json()["error"]["message"].get<std::string>(), HasSubstr("nope"));

  Answer unknown_kind = Get("/api/v1/namespaces/default/workloads/Gadget/x");
  EXPECT_EQ(unknown_kind.status, 400) << unknown_kind.body;

  Answer typo = Get("/api/v1/workloads?namespce=default");
  EXPECT_EQ(typo.status, 400);
  EXPECT_THAT(typo.json()["error"]["message"].get<std::string>(), HasSubstr("namespce"));

  Answer bad_bool = Get("/api/v1/namespaces/default/workloads/JobSet/demo?includePods=yes");
  EXPECT_EQ(bad_bool.status, 400);

  Answer no_route = Get("/api/v1/whatever");
  EXPECT_EQ(no_route.status, 404);
  EXPECT_EQ(no_route.json()["error"]["status"], "NOT_FOUND");
}

TEST_F(HttpApiTest, CallersAreAuthenticatedAndAuthorizedByTheService) {
  Answer anonymous = Get("/api/v1/workloads", "");
  EXPECT_EQ(anonymous.status, 401);
  EXPECT_EQ(anonymous.json()["error"]["status"], "UNAUTHENTICATED");

  Answer stranger = Get("/api/v1/workloads", "forged-token");
  EXPECT_EQ(stranger.status, 401);

  Answer intern = Get("/api/v1/workloads", "intern-token");
  ASSERT_EQ(intern.status, 200) << intern.body;
  EXPECT_EQ(intern.json()["workloads"].size(), 0u);
  EXPECT_EQ(intern.json()["filtered"], true);
  EXPECT_THAT(intern.body, Not(HasSubstr("demo")));

  Answer denied = Get("/api/v1/namespaces/default/workloads/JobSet/demo", "intern-token");
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(denied.json()["error"]["status"], "PERMISSION_DENIED");

  Answer stream = Get("/api/v1/events", "");
  EXPECT_EQ(stream.status, 401) << "a refused watch gets its status, not a 200 stream";
}

TEST_F(HttpApiTest, EventStreamSendsTheSnapshotThenChangesAndResumesFromLastEventId) {
  int fd = OpenEvents("?namespace=default");
  std::string snapshot = ReadUntil(fd, "event: SYNCED\n");
  EXPECT_THAT(snapshot, HasSubstr("HTTP/1.1 200 OK"));
  EXPECT_THAT(snapshot, HasSubstr("Content-Type: text/event-stream"));
  EXPECT_THAT(snapshot, HasSubstr("event: ADDED\ndata: {"));
  EXPECT_THAT(snapshot, HasSubstr("\"name\":\"demo\""));
  ASSERT_THAT(snapshot, HasSubstr("event: SYNCED\n"));
  TouchDemo("9001");
  std::string change = ReadUntil(fd, "\n\n");
  EXPECT_THAT(change, HasSubstr("event: MODIFIED\n"));
  ::close(fd);
  // The id of the MODIFIED event.
  size_t id_at = change.find("id: ");
  ASSERT_NE(id_at, std::string::npos) << change;
  std::string id = change.substr(id_at + 4, change.find('\n', id_at) - id_at - 4);

  TouchDemo("9002");                // while nobody watches
  harness_->index().WaitForIdle();  // resolved: part of the backlog, not a later event
  int resumed = OpenEvents("?namespace=default", id);
  std::string backlog = ReadUntil(resumed, "event: SYNCED\n");
  ::close(resumed);
  EXPECT_THAT(backlog, HasSubstr("event: MODIFIED\n"));
  EXPECT_THAT(backlog, Not(HasSubstr("event: ADDED")));
}

TEST_F(HttpApiTest, EventStreamRefusesABadRevisionAndOneOutsideTheHistory) {
  int fd = OpenEvents("?resumeRevision=soon");
  EXPECT_THAT(ReadUntil(fd, ""), HasSubstr("HTTP/1.1 400"));
  ::close(fd);
  fd = OpenEvents("", "12");  // far before this index's history
  std::string answer = ReadUntil(fd, "");
  ::close(fd);
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 400")) << answer;
  EXPECT_THAT(answer, HasSubstr("OUT_OF_RANGE")) << answer;
}

}  // namespace
}  // namespace wm::web
