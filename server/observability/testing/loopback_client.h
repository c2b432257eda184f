#ifndef WM_SERVER_OBSERVABILITY_TESTING_LOOPBACK_CLIENT_H_
#define WM_SERVER_OBSERVABILITY_TESTING_LOOPBACK_CLIENT_H_

#include <string>

namespace wm::observability::testing {

// For tests of what HttpServer serves: raw HTTP over a blocking loopback
// socket, byte for byte as a client sends and reads it.

// A socket connected to 127.0.0.1:`port` whose reads time out after
// `timeout_seconds` (so a broken server fails a test instead of hanging
// it); -1 when the connection failed.
int ConnectLoopback(int port, int timeout_seconds = 10);

// Sends all of `bytes`; false when the server reset the connection.
bool SendAll(int fd, const std::string& bytes);

// Reads until `want` is in what was read (all of it when `want` is empty),
// the server closes, or a read times out.
std::string ReadUntil(int fd, const std::string& want = "");

}  // namespace wm::observability::testing

#endif  // WM_SERVER_OBSERVABILITY_TESTING_LOOPBACK_CLIENT_H_
