#include "server/admission/https_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::admission {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Writes a self-signed certificate for 127.0.0.1 with `serial`, and its key.
void WriteCertificate(const std::string& cert_path, const std::string& key_path, long serial) {
  EVP_PKEY* key = EVP_EC_gen("prime256v1");
  ASSERT_NE(key, nullptr);
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  ASSERT_GT(X509_sign(cert, key, EVP_sha256()), 0);
  // Written beside, then renamed: a reader never sees half a file.
  FILE* out = std::fopen((cert_path + ".tmp").c_str(), "w");
  PEM_write_X509(out, cert);
  std::fclose(out);
  out = std::fopen((key_path + ".tmp").c_str(), "w");
  PEM_write_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(out);
  std::filesystem::rename(key_path + ".tmp", key_path);
  std::filesystem::rename(cert_path + ".tmp", cert_path);
  X509_free(cert);
  EVP_PKEY_free(key);
}

// A TLS client connection to 127.0.0.1:port (certificates not verified:
// the tests read the serial instead).
class Client {
 public:
  explicit Client(int port) : context_(SSL_CTX_new(TLS_client_method())) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    ssl_ = SSL_new(context_);
    SSL_set_fd(ssl_, fd_);
    handshaken_ = connected_ && SSL_connect(ssl_) == 1;
  }
  ~Client() {
    SSL_free(ssl_);
    SSL_CTX_free(context_);
    ::close(fd_);
  }
  bool handshaken() const { return handshaken_; }
  long serial() const {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    long serial = cert != nullptr ? ASN1_INTEGER_get(X509_get_serialNumber(cert)) : -1;
    X509_free(cert);
    return serial;
  }
  bool Send(const std::string& bytes) {
    return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) ==
           static_cast<int>(bytes.size());
  }
  // Reads one response (its head and Content-Length bytes), or what came
  // before the connection closed.
  std::string ReadResponse() {
    std::string data;
    char chunk[4096];
    for (;;) {
      size_t end = data.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t at = data.find("Content-Length: ");
        size_t length = at == std::string::npos ? 0 : std::stoul(data.substr(at + 16));
        if (data.size() >= end + 4 + length) return data.substr(0, end + 4 + length);
      }
      int n = SSL_read(ssl_, chunk, sizeof(chunk));
      if (n <= 0) return data;
      data.append(chunk, n);
    }
  }
  std::string Post(const std::string& path, const std::string& body) {
    Send(absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n",
                      "Content-Length: ", body.size(), "\r\n\r\n", body));
    return ReadResponse();
  }

 private:
  SSL_CTX* context_;
  SSL* ssl_;
  int fd_;
  bool connected_ = false, handshaken_ = false;
};

class HttpsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The clients write to connections the server cuts.
    ::signal(SIGPIPE, SIG_IGN);
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("https-server-test-", ::getpid(), "-", counter_++);
    std::filesystem::create_directories(dir_);
    cert_ = (dir_ / "tls.crt").string();
    key_ = (dir_ / "tls.key").string();
    WriteCertificate(cert_, key_, 1);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void StartServer(HttpsServer::Options options = {}) {
    auto tls = TlsFiles::Load(cert_, key_, absl::Milliseconds(50));
    ASSERT_TRUE(tls.ok()) << tls.status();
    tls_ = *std::move(tls);
    server_ = std::make_unique<HttpsServer>(*tls_, options);
    server_->Handle("/echo", [](const HttpsServer::Request& request) {
      return HttpsServer::Response{200, "text/plain",
                                   absl::StrCat(request.method, " ", request.body)};
    });
    ASSERT_TRUE(server_->Start("127.0.0.1:0").ok());
  }

  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::string cert_, key_;
  std::unique_ptr<TlsFiles> tls_;
  std::unique_ptr<HttpsServer> server_;
};

TEST_F(HttpsServerTest, AnswersPostsOnAKeptAliveConnection) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.handshaken());
  std::string first = client.Post("/echo", "{\"a\":1}");
  EXPECT_THAT(first, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(first, HasSubstr("\r\n\r\nPOST {\"a\":1}"));
  // The same connection serves the next request; an unknown path is 404.
  EXPECT_THAT(client.Post("/echo", "second"), HasSubstr("\r\n\r\nPOST second"));
  EXPECT_THAT(client.Post("/nowhere", "x"), StartsWith("HTTP/1.1 404"));
}

TEST_F(HttpsServerTest, RefusesWhatIsNotAPlainRequest) {
  StartServer({.max_body_bytes = 100});
  {
    Client client(server_->port());
    EXPECT_THAT(client.Post("/echo", std::string(101, 'x')), StartsWith("HTTP/1.1 413"));
  }
  {
    Client client(server_->port());
    client.Send("POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
    EXPECT_THAT(client.ReadResponse(), StartsWith("HTTP/1.1 501"));
  }
  {
    Client client(server_->port());
    client.Send("PUT /echo HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    EXPECT_THAT(client.ReadResponse(), StartsWith("HTTP/1.1 405"));
  }
}

TEST_F(HttpsServerTest, ATricklingClientIsCutAtTheRequestTimeout) {
  StartServer({.request_timeout = absl::Milliseconds(500)});
  Client client(server_->port());
  ASSERT_TRUE(client.handshaken());
  absl::Time start = absl::Now();
  client.Send("POST /echo HTTP/1.1\r\n");
  for (int i = 0; i < 20 && client.Send("X-Slow: 1\r\n"); ++i)
    absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(client.ReadResponse(), "");  // closed without an answer
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

TEST_F(HttpsServerTest, ConnectionsBeyondTheLimitAreClosedAtOnce) {
  StartServer({.max_connections = 2});
  Client a(server_->port()), b(server_->port());
  ASSERT_TRUE(a.handshaken());
  ASSERT_TRUE(b.handshaken());
  Client c(server_->port());
  EXPECT_FALSE(c.handshaken());
  EXPECT_EQ(server_->refused(), 1);
  // The others are still served.
  EXPECT_THAT(a.Post("/echo", "still"), HasSubstr("POST still"));
}

TEST_F(HttpsServerTest, ARenewedCertificateIsServedWithoutARestart) {
  StartServer();
  EXPECT_EQ(Client(server_->port()).serial(), 1);
  absl::SleepFor(absl::Milliseconds(20));
  WriteCertificate(cert_, key_, 2);
  absl::SleepFor(absl::Milliseconds(100));  // past the check interval
  EXPECT_EQ(Client(server_->port()).serial(), 2);
  EXPECT_EQ(tls_->reloads(), 1);
  // A broken pair leaves the last good one in use, and says why.
  {
    FILE* out = std::fopen(cert_.c_str(), "w");
    std::fputs("-----BEGIN CERTIFICATE-----\nnot base64\n", out);
    std::fclose(out);
  }
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(Client(server_->port()).serial(), 2);
  EXPECT_THAT(tls_->last_error(), HasSubstr("does not load"));
}

// Clients on many threads while the certificate is renewed and the server
// stops (run under TSan in the test command).
TEST_F(HttpsServerTest, ConcurrentClientsRenewalsAndStop) {
  StartServer({.max_connections = 8});
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 6; ++t) {
    clients.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        Client client(server_->port());
        if (!client.handshaken()) continue;
        std::string body = absl::StrCat(t, "-", i);
        if (absl::StrContains(client.Post("/echo", body), "POST " + body)) ++answered;
      }
    });
  }
  for (long serial = 10; serial < 15; ++serial) {
    WriteCertificate(cert_, key_, serial);
    absl::SleepFor(absl::Milliseconds(60));
  }
  for (auto& t : clients) t.join();
  EXPECT_GT(answered.load(), 0);
  EXPECT_GE(tls_->reloads(), 1);
  // A connection left open is ended by Stop.
  Client idle(server_->port());
  ASSERT_TRUE(idle.handshaken());
  server_->Stop();
  EXPECT_EQ(idle.ReadResponse(), "");
}

TEST(TlsFilesTest, MissingOrMismatchedFilesAreNamed) {
  auto missing = TlsFiles::Load("/nonexistent/tls.crt", "/nonexistent/tls.key", absl::Seconds(1));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/tls.crt"));
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("tls-files-test-", ::getpid());
  std::filesystem::create_directories(dir);
  WriteCertificate((dir / "a.crt").string(), (dir / "a.key").string(), 1);
  WriteCertificate((dir / "b.crt").string(), (dir / "b.key").string(), 2);
  auto mismatched =
      TlsFiles::Load((dir / "a.crt").string(), (dir / "b.key").string(), absl::Seconds(1));
  EXPECT_THAT(std::string(mismatched.status().message()), HasSubstr("b.key"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wm::admission
