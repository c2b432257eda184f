#ifndef WM_SERVER_KUBE_TESTING_LOOPBACK_H_
#define WM_SERVER_KUBE_TESTING_LOOPBACK_H_

namespace wm::kube::testing {

// A listening TCP socket on 127.0.0.1 at a free port (stored in `*port`).
// Aborts when the socket cannot be made: test servers only.
int ListenOnLoopback(int* port);

}  // namespace wm::kube::testing

#endif  // WM_SERVER_KUBE_TESTING_LOOPBACK_H_
