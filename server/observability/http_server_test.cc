#include "server/observability/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/observability/metrics.h"

namespace wm::observability {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A blocking client socket to the server, with a 5 s receive timeout so a
// broken server fails the test instead of hanging it.
class Client {
 public:
  explicit Client(int port, int family = AF_INET) {
    fd_ = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    if (family == AF_INET) {
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(port);
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    } else {
      sockaddr_in6 address{};
      address.sin6_family = AF_INET6;
      address.sin6_port = htons(port);
      address.sin6_addr = in6addr_loopback;
      connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    }
  }
  ~Client() { ::close(fd_); }

  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  // False if the server reset the connection.
  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += n;
    }
    return true;
  }

  // Everything until the server closes (or a reset or the timeout).
  std::string ReadAll() {
    std::string out;
    char buffer[4096];
    while (true) {
      ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        closed_by_server_ = n == 0 || errno == ECONNRESET;
        break;
      }
      out.append(buffer, n);
    }
    return out;
  }

  // After ReadAll(): whether it ended because the server closed or reset the
  // connection (rather than the receive timeout).
  bool closed_by_server() const { return closed_by_server_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_by_server_ = false;
};

std::string Fetch(int port, const std::string& request) {
  Client client(port);
  EXPECT_TRUE(client.connected());
  client.Send(request);
  return client.ReadAll();
}

std::string Get(int port, const std::string& target) {
  return Fetch(port, absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: localhost\r\n\r\n"));
}

// A server on 127.0.0.1 with "/hello" and "/echo" (which answers with the
// path and query it saw).
class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Handle("/hello", [](const HttpServer::Request&) {
      HttpServer::Response response;
      response.body = "hello, world\n";
      return response;
    });
    server_.Handle("/echo", [](const HttpServer::Request& request) {
      HttpServer::Response response;
      response.status = 202;
      response.content_type = "application/x-echo";
      response.body = absl::StrCat(request.method, " ", request.path, " ", request.query);
      return response;
    });
    ASSERT_TRUE(server_.Start("127.0.0.1:0").ok());
  }

  HttpServer server_;
};

TEST_F(HttpServerTest, PortZeroPicksAPort) {
  EXPECT_GT(server_.port(), 0);
  HttpServer other;
  EXPECT_EQ(other.port(), 0);
}

TEST_F(HttpServerTest, ServesRegisteredPath) {
  EXPECT_EQ(Get(server_.port(), "/hello"),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 13\r\n"
            "Connection: close\r\n"
            "\r\n"
            "hello, world\n");
}

TEST_F(HttpServerTest, PassesPathAndQueryAndStatus) {
  std::string response = Get(server_.port(), "/echo?a=1&b=%20");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 202 "));
  EXPECT_THAT(response, HasSubstr("\r\nContent-Type: application/x-echo\r\n"));
  EXPECT_THAT(response, EndsWith("\r\n\r\nGET /echo a=1&b=%20"));
}

TEST_F(HttpServerTest, HeadSendsHeadersOnly) {
  EXPECT_EQ(Fetch(server_.port(), "HEAD /hello HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 13\r\n"
            "Connection: close\r\n"
            "\r\n");
}

TEST_F(HttpServerTest, UnknownPathIs404) {
  EXPECT_THAT(Get(server_.port(), "/nope"), StartsWith("HTTP/1.1 404 Not Found\r\n"));
  // Exact match: neither a prefix nor a trailing slash matches.
  EXPECT_THAT(Get(server_.port(), "/hello/"), StartsWith("HTTP/1.1 404 "));
  EXPECT_THAT(Get(server_.port(), "/hell"), StartsWith("HTTP/1.1 404 "));
}

TEST_F(HttpServerTest, PostIs405) {
  std::string response =
      Fetch(server_.port(), "POST /hello HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 405 Method Not Allowed\r\n"));
  EXPECT_THAT(response, HasSubstr("\r\nAllow: GET, HEAD\r\n"));
}

TEST_F(HttpServerTest, MalformedRequestIs400) {
  EXPECT_THAT(Fetch(server_.port(), "GET\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Fetch(server_.port(), "GET hello HTTP/1.1\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Fetch(server_.port(), "GET /hello SPDY/3\r\n\r\n"), StartsWith("HTTP/1.1 400 "));
}

TEST_F(HttpServerTest, BadVersionTargetOrBytesGetTheirStatus) {
  EXPECT_THAT(Fetch(server_.port(), "GET /hello HTTP/2.0\r\n\r\n"), StartsWith("HTTP/1.1 505 "));
  EXPECT_THAT(Fetch(server_.port(), "GET /hello HTTP/1.0\r\n\r\n"), StartsWith("HTTP/1.1 200 "));
  EXPECT_THAT(
      Fetch(server_.port(), absl::StrCat("GET /", std::string(4096, 'a'), " HTTP/1.1\r\n\r\n")),
      StartsWith("HTTP/1.1 414 "));
  EXPECT_THAT(Fetch(server_.port(), std::string("GET /hel\0lo HTTP/1.1\r\n\r\n", 23)),
              StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Fetch(server_.port(), "GET /hello HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n"),
              StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(Fetch(server_.port(), "GET /hello HTTP/1.1\nHost: x\n\n"),
              StartsWith("HTTP/1.1 400 "));
}

TEST_F(HttpServerTest, BadRequestLineIsAnsweredBeforeTheHeadEnds) {
  Client client(server_.port());
  ASSERT_TRUE(client.connected());
  client.Send("DELETE /hello HTTP/1.1\r\nHost: x\r\n");  // no blank line, ever
  EXPECT_THAT(client.ReadAll(), StartsWith("HTTP/1.1 405 "));
}

TEST_F(HttpServerTest, RequestInPieces) {
  Client client(server_.port());
  ASSERT_TRUE(client.connected());
  client.Send("GET /hel");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  client.Send("lo HTTP/1.1\r\nHost: x\r");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  client.Send("\n\r\n");
  EXPECT_THAT(client.ReadAll(), EndsWith("\r\n\r\nhello, world\n"));
}

TEST_F(HttpServerTest, OversizedHeaderIs431OrClosed) {
  Client client(server_.port());
  ASSERT_TRUE(client.connected());
  client.Send(
      absl::StrCat("GET /hello HTTP/1.1\r\nX-Big: ", std::string(16 * 1024, 'a'), "\r\n\r\n"));
  std::string response = client.ReadAll();
  EXPECT_THAT(response, StartsWith("HTTP/1.1 431 "));
}

TEST_F(HttpServerTest, HeaderJustUnderTheCapIsServed) {
  std::string request = "GET /hello HTTP/1.1\r\nX-Pad: ";
  request += std::string(8 * 1024 - request.size() - 4, 'a');
  request += "\r\n\r\n";
  ASSERT_EQ(request.size(), 8u * 1024);
  EXPECT_THAT(Fetch(server_.port(), request), StartsWith("HTTP/1.1 200 "));
  request.insert(request.size() - 4, "a");
  EXPECT_THAT(Fetch(server_.port(), request), StartsWith("HTTP/1.1 431 "));
}

TEST_F(HttpServerTest, ConcurrentClients) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 20; ++j) {
        if (absl::EndsWith(Get(server_.port(), "/hello"), "hello, world\n")) ++ok;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 160);
}

TEST_F(HttpServerTest, StopWithIdleClientReturnsPromptly) {
  Client idle(server_.port());
  ASSERT_TRUE(idle.connected());
  Client partial(server_.port());
  ASSERT_TRUE(partial.connected());
  partial.Send("GET /hello HTTP/1.1\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both accepted
  auto start = std::chrono::steady_clock::now();
  server_.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(idle.ReadAll(), "");  // closed without a response
  server_.Stop();                 // idempotent
  EXPECT_FALSE(Client(server_.port()).connected());
}

TEST_F(HttpServerTest, HandlerCanBeAddedAfterStart) {
  EXPECT_THAT(Get(server_.port(), "/late"), StartsWith("HTTP/1.1 404 "));
  server_.Handle("/late", [](const HttpServer::Request&) {
    HttpServer::Response response;
    response.body = "late";
    return response;
  });
  EXPECT_THAT(Get(server_.port(), "/late"), EndsWith("\r\n\r\nlate"));
}

TEST_F(HttpServerTest, StartTwiceFails) {
  EXPECT_EQ(server_.Start("127.0.0.1:0").code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(HttpServerTest, AddressInUseNamesTheAddress) {
  HttpServer other;
  std::string address = absl::StrCat("127.0.0.1:", server_.port());
  absl::Status status = other.Start(address);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr(address));
  EXPECT_THAT(std::string(status.message()), HasSubstr("in use"));
}

TEST(HttpServerOptionsTest, SlowClientTimesOut) {
  HttpServerOptions options;
  options.head_timeout = absl::Milliseconds(200);
  HttpServer server(options);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Client client(server.port());
  ASSERT_TRUE(client.connected());
  client.Send("GET /x HTTP/1.1\r\n");
  auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(client.ReadAll(), StartsWith("HTTP/1.1 408 "));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(HttpServerOptionsTest, OptionsOutOfRangeNameTheField) {
  struct Case {
    std::function<void(HttpServerOptions&)> edit;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {[](HttpServerOptions& o) { o.head_timeout = absl::ZeroDuration(); }, "head_timeout"},
           {[](HttpServerOptions& o) { o.write_timeout = -absl::Seconds(1); }, "write_timeout"},
           {[](HttpServerOptions& o) { o.max_head_bytes = 0; }, "max_head_bytes"},
           {[](HttpServerOptions& o) { o.max_target_bytes = 0; }, "max_target_bytes"},
           {[](HttpServerOptions& o) { o.handler_threads = 0; }, "handler_threads"},
           {[](HttpServerOptions& o) { o.max_connections = o.handler_threads; },
            "max_connections"}}) {
    HttpServerOptions options;
    c.edit(options);
    HttpServer server(options);
    absl::Status status = server.Start("127.0.0.1:0");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(std::string(status.message()), HasSubstr("HttpServerOptions." + c.field));
  }
}

TEST(HttpServerOptionsTest, SlowReaderIsCutAtTheWriteDeadline) {
  const std::string body(32 << 20, 'x');  // far more than the socket buffers hold
  HttpServerOptions options;
  options.write_timeout = absl::Milliseconds(300);
  HttpServer server(options);
  server.Handle("/big", [&body](const HttpServer::Request&) {
    return HttpServer::Response{200, "text/plain", body};
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Client client(server.port());
  ASSERT_TRUE(client.connected());
  client.Send("GET /big HTTP/1.1\r\n\r\n");
  // Reading nothing, the client must see the server give up (a reset).
  pollfd hangup{client.fd(), 0, 0};
  ASSERT_EQ(::poll(&hangup, 1, 30 * 1000), 1) << "never cut";
  EXPECT_NE(hangup.revents & (POLLHUP | POLLERR), 0);
  std::string received = client.ReadAll();
  EXPECT_TRUE(client.closed_by_server());
  EXPECT_LT(received.size(), body.size());
}

TEST(HttpServerOptionsTest, HandlersQueueForTheirThreadsWhileProbesAreAnswered) {
  HttpServerOptions options;
  options.handler_threads = 1;
  HttpServer server(options);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  int entered = 0;
  server.Handle("/slow", [&](const HttpServer::Request&) {
    std::unique_lock<std::mutex> lock(mu);
    ++entered;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    return HttpServer::Response();
  });
  server.HandleProbe("/healthz", [](const HttpServer::Request&) { return HttpServer::Response(); });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  std::string first, second;
  std::thread a([&] { first = Get(server.port(), "/slow"); });
  std::thread b([&] { second = Get(server.port(), "/slow"); });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered == 1; });
  }
  // The only handler thread is held, and (most likely) a request waits for it.
  EXPECT_THAT(Get(server.port(), "/healthz"), StartsWith("HTTP/1.1 200 "));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  a.join();
  b.join();
  EXPECT_THAT(first, StartsWith("HTTP/1.1 200 "));
  EXPECT_THAT(second, StartsWith("HTTP/1.1 200 "));
}

// Clients that each sent the start of a request head and then one byte every
// 100 ms, until stopped: the slowloris attack.
class Tricklers {
 public:
  Tricklers(int port, int count) {
    for (int i = 0; i < count; ++i) {
      clients_.push_back(std::make_unique<Client>(port));
      clients_.back()->Send("GET /slow HTTP/1.1\r\nX-Pad: ");
    }
    thread_ = std::thread([this] {
      while (!done_.load()) {
        for (auto& client : clients_) client->Send("a");  // fails once evicted
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  ~Tricklers() {
    done_ = true;
    thread_.join();
  }

  Client& client(int i) { return *clients_[i]; }

 private:
  std::vector<std::unique_ptr<Client>> clients_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST(HttpServerHostileTest, ProbeAnsweredWhileSlowClientsHoldEverySlot) {
  HttpServerOptions options;
  options.head_timeout = absl::Seconds(30);  // longer than the test: slots are held
  options.max_connections = 4;
  HttpServer server(options);
  server.Handle("/healthz", [](const HttpServer::Request&) { return HttpServer::Response(); });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Tricklers tricklers(server.port(), 2 * options.max_connections);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // every slot taken
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(Get(server.port(), "/healthz"), StartsWith("HTTP/1.1 200 ")) << i;
  }
}

TEST(HttpServerHostileTest, FloodBeyondTheCapEvictsTheOldestIdleConnections) {
  HttpServerOptions options;
  options.head_timeout = absl::Seconds(30);
  options.max_connections = 4;
  HttpServer server(options);
  server.Handle("/healthz", [](const HttpServer::Request&) { return HttpServer::Response(); });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 50; ++i) {
    idle.push_back(std::make_unique<Client>(server.port()));
    ASSERT_TRUE(idle.back()->connected()) << i;
  }
  EXPECT_THAT(Get(server.port(), "/healthz"), StartsWith("HTTP/1.1 200 "));
  // The first idle client was evicted long before its deadline: closed
  // (with a 503 if anything) rather than left to the receive timeout.
  std::string evicted = idle.front()->ReadAll();
  EXPECT_TRUE(idle.front()->closed_by_server());
  EXPECT_TRUE(evicted.empty() || absl::StartsWith(evicted, "HTTP/1.1 503 ")) << evicted;
}

TEST(HttpServerHostileTest, HeadTrickledForeverIsCutAtTheWholeHeadDeadline) {
  HttpServerOptions options;
  options.head_timeout = absl::Milliseconds(300);
  HttpServer server(options);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Tricklers tricklers(server.port(), 1);  // a byte every 100 ms, well within any per-read timeout
  EXPECT_THAT(tricklers.client(0).ReadAll(), StartsWith("HTTP/1.1 408 "));
  EXPECT_TRUE(tricklers.client(0).closed_by_server());
}

// For TSan: the I/O thread, the handler threads, Handle() from another
// thread and Stop() while clients of every kind keep coming.
TEST(HttpServerStressTest, ManyClientsWhileRegisteringAndStopping) {
  HttpServerOptions options;
  options.max_connections = 8;
  options.head_timeout = absl::Milliseconds(200);
  HttpServer server(options);
  server.Handle("/work", [](const HttpServer::Request&) {
    return HttpServer::Response{200, "text/plain", "work\n"};
  });
  server.HandleProbe("/healthz", [](const HttpServer::Request&) { return HttpServer::Response(); });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  const int port = server.port();
  std::atomic<bool> done{false};
  std::atomic<int> answered{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 12; ++i) {
    clients.emplace_back([&, i] {
      for (int j = 0; !done.load(); ++j) {
        Client client(port);
        switch ((i + j) % 4) {
          case 0:
            client.Send("GET /work HTTP/1.1\r\n\r\n");
            break;
          case 1:
            client.Send("GET /healthz HTTP/1.1\r\n\r\n");
            break;
          case 2:
            client.Send("GET /late HTTP/1.1\r\n\r\n");
            break;
          case 3:
            client.Send("GET /work HTTP/1.1\r\nX-");  // left to the deadline or eviction
            break;
        }
        // Nothing (refused, evicted, stopped) or a whole answer.
        std::string response = client.ReadAll();
        if (response.empty()) continue;
        if (absl::StartsWith(response, "HTTP/1.1 200 ") ||
            absl::StartsWith(response, "HTTP/1.1 404 ")) {
          ++answered;
        } else if (!absl::StartsWith(response, "HTTP/1.1 503 ") &&
                   !absl::StartsWith(response, "HTTP/1.1 408 ")) {
          ++wrong;
        }
      }
    });
  }
  std::thread registrar([&] {
    for (int i = 0; !done.load(); ++i) {
      server.Handle("/late", [i](const HttpServer::Request&) {
        return HttpServer::Response{200, "text/plain", absl::StrCat(i)};
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  for (int i = 0; i < 1000 && answered.load() < 300; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  server.Stop();  // clients still coming
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  done = true;
  for (std::thread& client : clients) client.join();
  registrar.join();
  EXPECT_GE(answered.load(), 300);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(HttpServerAddressTest, InvalidAddresses) {
  for (const char* address :
       {"", "9090", "localhost:9090", "::1:9090", "[::1]9090", "[]:1", "1.2.3.4:", "1.2.3.4:x",
        "1.2.3.4:65536", "1.2.3.4:-1", "[127.0.0.1]:0", "999.1.1.1:0"}) {
    HttpServer server;
    absl::Status status = server.Start(address);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << address;
    EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat("\"", address, "\"")));
  }
}

TEST(HttpServerAddressTest, AllInterfaces) {
  HttpServer server;
  server.Handle("/healthz", [](const HttpServer::Request&) { return HttpServer::Response(); });
  ASSERT_TRUE(server.Start(":0").ok());
  EXPECT_THAT(Get(server.port(), "/healthz"), StartsWith("HTTP/1.1 200 "));
}

TEST(HttpServerAddressTest, AllIPv4Interfaces) {
  HttpServer server;
  server.Handle("/healthz", [](const HttpServer::Request&) { return HttpServer::Response(); });
  ASSERT_TRUE(server.Start("0.0.0.0:0").ok());
  EXPECT_THAT(Get(server.port(), "/healthz"), StartsWith("HTTP/1.1 200 "));
}

TEST(HttpServerAddressTest, IPv6Loopback) {
  HttpServer server;
  server.Handle("/healthz", [](const HttpServer::Request&) { return HttpServer::Response(); });
  absl::Status status = server.Start("[::1]:0");
  if (!status.ok()) GTEST_SKIP() << "no IPv6 loopback: " << status;
  Client client(server.port(), AF_INET6);
  ASSERT_TRUE(client.connected());
  client.Send("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_THAT(client.ReadAll(), StartsWith("HTTP/1.1 200 "));
}

TEST(HttpServerMetricsTest, ServesARegistry) {
  Registry registry;
  registry.AddCounter("hits_total", "Hits.")->WithLabels({}).Increment(2);
  HttpServer server;
  server.Handle("/metrics", [&registry](const HttpServer::Request&) {
    HttpServer::Response response;
    response.content_type = std::string(kTextFormatContentType);
    response.body = registry.Render();
    return response;
  });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  EXPECT_EQ(Get(server.port(), "/metrics"),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: 63\r\n"
            "Connection: close\r\n"
            "\r\n"
            "# HELP hits_total Hits.\n"
            "# TYPE hits_total counter\n"
            "hits_total 2\n");
}

}  // namespace
}  // namespace wm::observability
