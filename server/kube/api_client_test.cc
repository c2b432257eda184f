// ApiClient's transfer rules against a scripted HTTP server, at the byte
// level. Requests against the real kube-apiserver are tested in
// integration_tests/kube/.
#include "server/kube/api_client.h"

#include <atomic>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/kube/testing/scripted_server.h"

namespace wm::kube {
namespace {

using testing::ScriptedServer;

ClusterConnection Connection(const ScriptedServer& server) {
  ClusterConnection connection;
  connection.server = server.url();
  return connection;
}

// A consumer that spends longer than the idle timeout over one chunk (a large
// watch event decoded on a slow machine) has not seen a silent connection:
// the next chunk is delivered and the stream ends normally.
TEST(ApiClientTest, StreamIdleClockDoesNotCountTheConsumersTime) {
  ScriptedServer server([](const ScriptedServer::Request&, ScriptedServer::Responder& out) {
    out.Head(200);
    out.Write("first\n");
    // The next byte comes 3 s after the first, 0.5 s after the consumer is done.
    out.Sleep(absl::Seconds(3));
    out.Write("second\n");
    out.Sleep(absl::Milliseconds(200));
  });
  ApiClient client(Connection(server));
  HttpRequest request;
  request.path = "/api/v1/pods?watch=1";
  std::string received;
  absl::StatusOr<HttpResponse> response = client.Stream(
      request,
      [&](absl::string_view bytes) {
        if (received.empty()) absl::SleepFor(absl::Milliseconds(2500));
        received.append(bytes.data(), bytes.size());
        return true;
      },
      nullptr, absl::Milliseconds(1500));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(received, "first\nsecond\n");
}

// The idle clock does end a connection on which nothing arrives.
TEST(ApiClientTest, StreamWithoutBytesForTheIdleTimeoutIsDeadlineExceeded) {
  ScriptedServer server([](const ScriptedServer::Request&, ScriptedServer::Responder& out) {
    out.Head(200);
    out.Write("first\n");
    out.Sleep(absl::Seconds(3));
  });
  ApiClient client(Connection(server));
  HttpRequest request;
  request.path = "/api/v1/pods?watch=1";
  std::string received;
  absl::StatusOr<HttpResponse> response = client.Stream(
      request,
      [&](absl::string_view bytes) {
        received.append(bytes.data(), bytes.size());
        return true;
      },
      nullptr, absl::Seconds(1));
  EXPECT_TRUE(absl::IsDeadlineExceeded(response.status())) << response.status();
  EXPECT_EQ(received, "first\n");
}

}  // namespace
}  // namespace wm::kube
