#include "server/observability/http_request_head.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::observability::internal {
namespace {

using ::testing::HasSubstr;

TEST(ParseRequestHeadTest, CompleteHead) {
  std::string head = "GET /metrics?a=1&b HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
  ParsedHead parsed = ParseRequestHead(head + "body bytes");
  EXPECT_EQ(parsed.status, 200) << parsed.error;
  EXPECT_EQ(parsed.method, "GET");
  EXPECT_EQ(parsed.path, "/metrics");
  EXPECT_EQ(parsed.query, "a=1&b");
  EXPECT_EQ(parsed.size, head.size());
}

TEST(ParseRequestHeadTest, KeepsTheAuthorizationHeaderAndRefusesTwo) {
  ParsedHead parsed =
      ParseRequestHead("GET /metrics HTTP/1.1\r\nauthorization:  Bearer abc \r\n\r\n");
  EXPECT_EQ(parsed.status, 200) << parsed.error;
  EXPECT_EQ(parsed.authorization, "Bearer abc");
  EXPECT_EQ(ParseRequestHead("GET / HTTP/1.1\r\nHost: x\r\n\r\n").authorization, "");
  parsed = ParseRequestHead(
      "GET / HTTP/1.1\r\nAuthorization: Bearer a\r\nAUTHORIZATION: Bearer b\r\n\r\n");
  EXPECT_EQ(parsed.status, 400);
  EXPECT_THAT(parsed.error, ::testing::HasSubstr("a second Authorization header"));
}

TEST(ParseRequestHeadTest, KeepsTheLastEventIdHeaderAndRefusesTwo) {
  ParsedHead parsed = ParseRequestHead("GET /events HTTP/1.1\r\nLast-Event-ID: 17 \r\n\r\n");
  EXPECT_EQ(parsed.status, 200) << parsed.error;
  EXPECT_EQ(parsed.last_event_id, "17");
  parsed = ParseRequestHead("GET / HTTP/1.1\r\nlast-event-id: 1\r\nLast-Event-ID: 2\r\n\r\n");
  EXPECT_EQ(parsed.status, 400);
  EXPECT_THAT(parsed.error, ::testing::HasSubstr("a second Last-Event-ID header"));
}

TEST(ParseRequestHeadTest, HeadWithoutHeadersAndHttp10) {
  ParsedHead parsed = ParseRequestHead("HEAD / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(parsed.status, 200) << parsed.error;
  EXPECT_EQ(parsed.method, "HEAD");
  EXPECT_EQ(parsed.path, "/");
  EXPECT_EQ(parsed.query, "");
}

TEST(ParseRequestHeadTest, EveryPrefixOfAValidHeadIsIncomplete) {
  std::string head = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Empty:\r\n\r\n";
  for (size_t n = 0; n < head.size(); ++n) {
    EXPECT_EQ(ParseRequestHead(head.substr(0, n)).status, 0) << n;
  }
  EXPECT_EQ(ParseRequestHead(head).status, 200);
}

TEST(ParseRequestHeadTest, StatusPerError) {
  struct Case {
    std::string bytes;
    int status;
    std::string error;
  };
  for (const Case& c : {
           Case{"GET\r\n\r\n", 400, "want METHOD SP TARGET SP HTTP-VERSION"},
           Case{"GET  / HTTP/1.1\r\n\r\n", 400, "want METHOD"},
           Case{"GET / HTTP/1.1 x\r\n\r\n", 400, "want METHOD"},
           Case{"\r\nGET / HTTP/1.1\r\n\r\n", 400, "want METHOD"},
           Case{"G(T / HTTP/1.1\r\n\r\n", 400, "method is not a token"},
           Case{"GET hello HTTP/1.1\r\n\r\n", 400, "must start with '/'"},
           Case{"GET /a#b HTTP/1.1\r\n\r\n", 400, "fragment"},
           Case{"GET / SPDY/3\r\n\r\n", 400, "HTTP/DIGIT.DIGIT"},
           Case{"GET / HTTP/1.10\r\n\r\n", 400, "HTTP/DIGIT.DIGIT"},
           Case{"GET / HTTP/2.0\r\n\r\n", 505, "HTTP/1.x"},
           Case{"GET / HTTP/0.9\r\n\r\n", 505, "HTTP/1.x"},
           Case{"POST / HTTP/1.1\r\n", 405, "GET and HEAD"},
           Case{"BREW /pot HTTP/1.1\r\n", 405, "GET and HEAD"},
           Case{"GET / HTTP/1.1\nHost: x\n\n", 400, "bare LF at offset 14"},
           Case{"GET / HTTP/1.1\rHost", 400, "bare CR at offset 14"},
           Case{std::string("GET /\0 HTTP/1.1\r\n\r\n", 20), 400, "byte 0x0 at offset 5"},
           Case{"GET /\x7f", 400, "byte 0x7f at offset 5"},
           Case{"GET /caf\xc3\xa9", 400, "byte 0xc3 at offset 8"},
           Case{"GET\t/ HTTP/1.1\r\n\r\n", 400, "tab in the request line"},
           Case{"GET / HTTP/1.1\r\nHost x\r\n\r\n", 400, "want NAME: VALUE"},
           Case{"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, "want NAME: VALUE"},
           Case{"GET / HTTP/1.1\r\n: x\r\n\r\n", 400, "want NAME: VALUE"},
           Case{"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400, "folded"},
       }) {
    ParsedHead parsed = ParseRequestHead(c.bytes);
    EXPECT_EQ(parsed.status, c.status) << c.bytes;
    EXPECT_THAT(parsed.error, HasSubstr(c.error)) << c.bytes;
  }
}

TEST(ParseRequestHeadTest, TargetLengthIsBoundedEvenBeforeItsLineEnds) {
  RequestHeadLimits limits;
  limits.max_target_bytes = 8;
  EXPECT_EQ(ParseRequestHead("GET /2345678 HTTP/1.1\r\n\r\n", limits).status, 200);
  ParsedHead parsed = ParseRequestHead("GET /23456789 HTTP/1.1\r\n\r\n", limits);
  EXPECT_EQ(parsed.status, 414);
  EXPECT_THAT(parsed.error, HasSubstr("over 8 bytes"));
  EXPECT_EQ(ParseRequestHead("GET /23456789", limits).status, 414);
  EXPECT_EQ(ParseRequestHead("GET /2345678", limits).status, 0);
}

TEST(ParseRequestHeadTest, HeadLengthIsBounded) {
  RequestHeadLimits limits;
  limits.max_head_bytes = 32;
  std::string head = "GET / HTTP/1.1\r\nX: ";
  head += std::string(32 - head.size() - 4, 'a') + "\r\n\r\n";
  ASSERT_EQ(head.size(), 32u);
  EXPECT_EQ(ParseRequestHead(head, limits).status, 200);
  ParsedHead parsed = ParseRequestHead("GET / HTTP/1.1\r\nX: a" + head.substr(19), limits);
  EXPECT_EQ(parsed.status, 431);
  EXPECT_THAT(parsed.error, HasSubstr("within 32 bytes"));
  // Judged once that many bytes are in, without waiting for more.
  EXPECT_EQ(
      ParseRequestHead(std::string("GET / HTTP/1.1\r\nX: ") + std::string(13, 'a'), limits).status,
      431);
  EXPECT_EQ(
      ParseRequestHead(std::string("GET / HTTP/1.1\r\nX: ") + std::string(12, 'a'), limits).status,
      0);
}

TEST(ParseRequestHeadTest, PostIsServedOnlyWhenAllowedAndNeedsAPlainContentLength) {
  std::string head =
      "POST /validate HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 42\r\n\r\n";
  EXPECT_EQ(ParseRequestHead(head).status, 405);
  RequestHeadLimits post;
  post.allow_post = true;
  ParsedHead parsed = ParseRequestHead(head, post);
  EXPECT_EQ(parsed.status, 200) << parsed.error;
  EXPECT_EQ(parsed.method, "POST");
  EXPECT_EQ(parsed.content_length, 42);
  EXPECT_EQ(parsed.content_type, "application/json");

  EXPECT_EQ(ParseRequestHead("POST / HTTP/1.1\r\n\r\n", post).status, 411);
  EXPECT_EQ(ParseRequestHead(
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", post)
                .status,
            501);
  for (const char* bad : {"-1", "+1", "1,1", "", "0x10", "1 2", "9999999999999999"}) {
    parsed = ParseRequestHead(absl::StrCat("POST / HTTP/1.1\r\nContent-Length: ", bad, "\r\n\r\n"),
                              post);
    EXPECT_EQ(parsed.status, 400) << bad;
  }
  parsed =
      ParseRequestHead("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", post);
  EXPECT_EQ(parsed.status, 400);
  EXPECT_THAT(parsed.error, HasSubstr("a second Content-Length header"));
  // A GET's body length is read too: the server must read past it.
  EXPECT_EQ(ParseRequestHead("GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", post).content_length,
            5);
}

}  // namespace
}  // namespace wm::observability::internal
