// HttpServer's prefix routes and streaming responses (ResponseStream).
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/observability/http_server.h"
#include "server/observability/testing/loopback_client.h"

namespace wm::observability {
namespace {

using testing::ConnectLoopback;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadUntil;
using testing::SendAll;
using ::testing::StartsWith;

std::string ReadToEnd(int fd) { return ReadUntil(fd); }

// A connected loopback socket (5 s read timeout), asserted.
int Connect(int port, int timeout_s = 5) {
  int fd = ConnectLoopback(port, timeout_s);
  EXPECT_GE(fd, 0) << "cannot connect to port " << port;
  return fd;
}

void SendRequest(int fd, const std::string& bytes) { ASSERT_TRUE(SendAll(fd, bytes)); }

// A stream handler that hands its stream to the test.
struct StreamCatcher {
  std::mutex mu;
  std::shared_ptr<ResponseStream> stream;
  absl::Notification opened;
  absl::Notification closed;

  HttpServer::Handler Handler(std::string keepalive = "") {
    return [this, keepalive](const HttpServer::Request&) {
      HttpServer::Response response;
      response.content_type = "text/event-stream";
      response.headers = {"Cache-Control: no-cache"};
      response.keepalive = keepalive;
      response.stream = [this](std::shared_ptr<ResponseStream> s) {
        s->SetOnClose([this] { closed.Notify(); });
        std::lock_guard<std::mutex> lock(mu);
        stream = std::move(s);
        opened.Notify();
      };
      return response;
    };
  }
  std::shared_ptr<ResponseStream> Get() {
    std::lock_guard<std::mutex> lock(mu);
    return stream;
  }
};

TEST(HttpServerRoutesTest, ExactPathBeatsPrefixAndTheLongestPrefixWins) {
  HttpServer server;
  auto answer = [](std::string text) {
    return [text](const HttpServer::Request& request) {
      return HttpServer::Response{200, "text/plain", absl::StrCat(text, " ", request.path)};
    };
  };
  server.HandlePrefix("/api/", answer("api"));
  server.HandlePrefix("/api/v1/items/", answer("items"));
  server.Handle("/api/v1/items/special", answer("exact"));
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  auto get = [&](const std::string& path) {
    int fd = Connect(server.port());
    SendAll(fd, absl::StrCat("GET ", path, " HTTP/1.1\r\n\r\n"));
    std::string out = ReadToEnd(fd);
    ::close(fd);
    return out;
  };
  EXPECT_THAT(get("/api/v1/items/a/b"), HasSubstr("items /api/v1/items/a/b"));
  EXPECT_THAT(get("/api/v1/items/special"), HasSubstr("exact /api/v1/items/special"));
  EXPECT_THAT(get("/api/v1/other"), HasSubstr("api /api/v1/other"));
  EXPECT_THAT(get("/apix"), StartsWith("HTTP/1.1 404"));
  EXPECT_THAT(get("/ap"), StartsWith("HTTP/1.1 404"));
}

TEST(HttpServerRoutesTest, HandlerSeesLastEventIdAndExtraHeadersAreSent) {
  HttpServer server;
  server.Handle("/resume", [](const HttpServer::Request& request) {
    HttpServer::Response response{200, "text/plain", "from " + request.last_event_id};
    response.headers = {"Cache-Control: no-store"};
    return response;
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  int fd = Connect(server.port());
  SendRequest(fd, "GET /resume HTTP/1.1\r\nLast-Event-ID:  42 \r\n\r\n");
  std::string out = ReadToEnd(fd);
  ::close(fd);
  EXPECT_THAT(out, HasSubstr("\r\nCache-Control: no-store\r\n"));
  EXPECT_THAT(out, HasSubstr("\r\n\r\nfrom 42"));
}

TEST(HttpServerStreamTest, WritesReachTheClientAsTheyComeAndFinishEndsTheResponse) {
  // Before the server, which may call it until it stops.
  StreamCatcher catcher;
  HttpServer server;
  server.Handle("/events", catcher.Handler());
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  int fd = Connect(server.port());
  SendRequest(fd, "GET /events HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(catcher.opened.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ASSERT_TRUE(catcher.Get()->Write("data: one\n\n"));
  std::string head = ReadUntil(fd, "data: one\n\n");
  EXPECT_THAT(head, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(head, HasSubstr("Content-Type: text/event-stream\r\n"));
  EXPECT_THAT(head, HasSubstr("Cache-Control: no-cache\r\n"));
  EXPECT_THAT(head, Not(HasSubstr("Content-Length")));
  EXPECT_THAT(head, HasSubstr("data: one\n\n"));
  // The second event comes after the first was read: the stream is live.
  ASSERT_TRUE(catcher.Get()->Write("data: two\n\n"));
  catcher.Get()->Finish();
  EXPECT_EQ(ReadToEnd(fd), "data: two\n\n");
  ::close(fd);
  EXPECT_TRUE(catcher.closed.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_FALSE(catcher.Get()->Write("late"));
}

TEST(HttpServerStreamTest, ClientLeavingClosesTheStream) {
  // Before the server, which may call it until it stops.
  StreamCatcher catcher;
  HttpServer server;
  server.Handle("/events", catcher.Handler());
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  int fd = Connect(server.port());
  SendRequest(fd, "GET /events HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(catcher.opened.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ReadUntil(fd, "\r\n\r\n");
  ::close(fd);
  ASSERT_TRUE(catcher.closed.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_TRUE(catcher.Get()->closed());
  EXPECT_FALSE(catcher.Get()->Write("data: x\n\n"));
}

TEST(HttpServerStreamTest, ClientThatDoesNotReadIsCutWhenItsQueueIsFull) {
  HttpServerOptions options;
  options.max_stream_queued_bytes = 64 * 1024;
  // Before the server, which may call it until it stops.
  StreamCatcher catcher;
  HttpServer server(options);
  server.Handle("/events", catcher.Handler());
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  int fd = Connect(server.port());
  SendRequest(fd, "GET /events HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(catcher.opened.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // The socket buffers take some megabytes; the queue the rest, up to its
  // bound. The producer must be told to stop, whatever the kernel holds.
  const std::string event(4096, 'x');
  bool refused = false;
  absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (!refused && absl::Now() < give_up) refused = !catcher.Get()->Write(event);
  EXPECT_TRUE(refused) << "a reader that never reads was fed forever";
  EXPECT_TRUE(catcher.closed.WaitForNotificationWithTimeout(absl::Seconds(5)));
  ::close(fd);
}

TEST(HttpServerStreamTest, IdleStreamSendsItsKeepalive) {
  HttpServerOptions options;
  options.stream_keepalive_interval = absl::Milliseconds(100);
  // Before the server, which may call it until it stops.
  StreamCatcher catcher;
  HttpServer server(options);
  server.Handle("/events", catcher.Handler(": keepalive\n\n"));
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  int fd = Connect(server.port());
  SendRequest(fd, "GET /events HTTP/1.1\r\n\r\n");
  std::string out = ReadUntil(fd, ": keepalive\n\n: keepalive\n\n");
  EXPECT_THAT(out, HasSubstr(": keepalive\n\n: keepalive\n\n"));
  ::close(fd);
}

TEST(HttpServerStreamTest, StreamsPastTheLimitAre503AndHeadStartsNone) {
  HttpServerOptions options;
  options.max_streams = 1;
  // Before the server, which may call them until it stops.
  StreamCatcher first;
  std::atomic<int> started{0};
  HttpServer server(options);
  server.Handle("/first", first.Handler());
  server.Handle("/other", [&started](const HttpServer::Request&) {
    HttpServer::Response response;
    response.stream = [&started](std::shared_ptr<ResponseStream>) { ++started; };
    return response;
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  int fd = Connect(server.port());
  SendRequest(fd, "GET /first HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(first.opened.WaitForNotificationWithTimeout(absl::Seconds(5)));
  int second = Connect(server.port());
  SendRequest(second, "GET /other HTTP/1.1\r\n\r\n");
  EXPECT_THAT(ReadToEnd(second), StartsWith("HTTP/1.1 503"));
  ::close(second);
  int head = Connect(server.port());
  SendRequest(head, "HEAD /other HTTP/1.1\r\n\r\n");
  EXPECT_THAT(ReadToEnd(head), StartsWith("HTTP/1.1 200"));
  ::close(head);
  EXPECT_EQ(started.load(), 0);
  // The first stream's end frees its slot.
  ::close(fd);
  ASSERT_TRUE(first.closed.WaitForNotificationWithTimeout(absl::Seconds(5)));
  // (The slot is freed on the server's loop, so a stream asked for at once
  // may still get 503: ask until one is granted.)
  absl::Time give_up = absl::Now() + absl::Seconds(5);
  bool granted = false;
  while (!granted && absl::Now() < give_up) {
    int again = Connect(server.port());
    SendRequest(again, "GET /other HTTP/1.1\r\n\r\n");
    granted = absl::StartsWith(ReadUntil(again, "\r\n\r\n"), "HTTP/1.1 200");
    ::close(again);
  }
  EXPECT_TRUE(granted);
  // Its producer runs once, on the handler thread, after the head is sent.
  while (started.load() == 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(started.load(), 1);
}

// A producer with its whole body at hand writes it on the handler thread,
// waiting for the client to make room: far more than the queue holds
// arrives whole, in order.
TEST(HttpServerStreamTest, ProducerOnTheHandlerThreadWaitsForTheClient) {
  HttpServerOptions options;
  options.max_stream_queued_bytes = 64 * 1024;
  HttpServer server(options);
  std::string body;
  for (int i = 0; body.size() < (8 << 20); ++i) absl::StrAppend(&body, "line ", i, "\n");
  server.Handle("/big", [&body](const HttpServer::Request&) {
    HttpServer::Response response;
    response.stream = [&body](std::shared_ptr<ResponseStream> stream) {
      for (size_t at = 0; at < body.size(); at += 16 * 1024) {
        if (!stream->WriteWait(absl::string_view(body).substr(at, 16 * 1024), absl::Seconds(10))) {
          return;
        }
      }
      stream->Finish();
    };
    return response;
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  int fd = Connect(server.port());
  SendRequest(fd, "GET /big HTTP/1.1\r\n\r\n");
  std::string out = ReadToEnd(fd);
  ::close(fd);
  size_t end = out.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(out.size() - end - 4, body.size());
  EXPECT_TRUE(out.substr(end + 4) == body);
}

TEST(HttpServerStreamTest, WriteWaitGivesUpOnAClientThatDoesNotRead) {
  HttpServerOptions options;
  options.max_stream_queued_bytes = 64 * 1024;
  HttpServer server(options);
  std::atomic<bool> refused{false};
  absl::Notification done;
  server.Handle("/big", [&](const HttpServer::Request&) {
    HttpServer::Response response;
    response.stream = [&](std::shared_ptr<ResponseStream> stream) {
      const std::string chunk(32 * 1024, 'x');
      for (int i = 0; i < 100000 && !refused; ++i) {
        refused = !stream->WriteWait(chunk, absl::Milliseconds(200));
      }
      done.Notify();
    };
    return response;
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  int fd = Connect(server.port());
  SendRequest(fd, "GET /big HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(refused);
  ::close(fd);
}

TEST(HttpServerStreamTest, StopClosesOpenStreams) {
  // Before the server, which may call it until it stops.
  StreamCatcher catcher;
  auto server = std::make_unique<HttpServer>();
  server->Handle("/events", catcher.Handler());
  ASSERT_TRUE(server->Start("127.0.0.1:0").ok());
  int fd = Connect(server->port());
  SendRequest(fd, "GET /events HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(catcher.opened.WaitForNotificationWithTimeout(absl::Seconds(5)));
  server->Stop();
  EXPECT_TRUE(catcher.closed.HasBeenNotified());
  EXPECT_FALSE(catcher.Get()->Write("data: x\n\n"));
  server.reset();
  ::close(fd);
}

// Producers on several threads write while clients come and go and the
// server stops: for TSan.
TEST(HttpServerStreamStressTest, ProducersWriteWhileClientsLeaveAndTheServerStops) {
  HttpServerOptions options;
  options.max_stream_queued_bytes = 16 * 1024;
  HttpServer server(options);
  std::mutex mu;
  std::vector<std::shared_ptr<ResponseStream>> streams;
  server.Handle("/events", [&](const HttpServer::Request&) {
    HttpServer::Response response;
    response.stream = [&](std::shared_ptr<ResponseStream> s) {
      std::lock_guard<std::mutex> lock(mu);
      streams.push_back(std::move(s));
    };
    return response;
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  std::atomic<bool> done{false};
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&] {
      while (!done) {
        std::vector<std::shared_ptr<ResponseStream>> now;
        {
          std::lock_guard<std::mutex> lock(mu);
          now = streams;
        }
        for (auto& s : now) s->Write("data: tick\n\n");
        std::this_thread::yield();
      }
    });
  }
  for (int i = 0; i < 40; ++i) {
    int fd = Connect(server.port(), 1);
    SendRequest(fd, "GET /events HTTP/1.1\r\n\r\n");
    ReadUntil(fd, "tick");
    ::close(fd);
  }
  server.Stop();
  done = true;
  for (auto& t : producers) t.join();
  std::lock_guard<std::mutex> lock(mu);
  for (auto& s : streams) EXPECT_TRUE(s->closed());
}

}  // namespace
}  // namespace wm::observability
