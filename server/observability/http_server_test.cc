#include "server/observability/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

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
      if (n <= 0) break;
      out.append(buffer, n);
    }
    return out;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
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
  options.io_timeout = absl::Milliseconds(200);
  HttpServer server(options);
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Client client(server.port());
  ASSERT_TRUE(client.connected());
  client.Send("GET /x HTTP/1.1\r\n");
  auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(client.ReadAll(), StartsWith("HTTP/1.1 408 "));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(HttpServerOptionsTest, ConnectionsBeyondTheCapWaitForASlot) {
  HttpServerOptions options;
  options.max_connections = 1;
  HttpServer server(options);
  server.Handle("/", [](const HttpServer::Request&) { return HttpServer::Response(); });
  ASSERT_TRUE(server.Start("127.0.0.1:0").ok());
  Client holder(server.port());
  ASSERT_TRUE(holder.connected());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // accepted
  std::atomic<bool> answered{false};
  std::string waiting_response;
  std::thread waiting([&] {
    waiting_response = Get(server.port(), "/");
    answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(answered.load()) << "served beyond the cap";
  holder.Send("GET / HTTP/1.1\r\n\r\n");
  EXPECT_THAT(holder.ReadAll(), StartsWith("HTTP/1.1 200 "));
  waiting.join();
  EXPECT_THAT(waiting_response, StartsWith("HTTP/1.1 200 "));
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
