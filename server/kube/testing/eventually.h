#ifndef WM_SERVER_KUBE_TESTING_EVENTUALLY_H_
#define WM_SERVER_KUBE_TESTING_EVENTUALLY_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace wm::kube::testing {

// Polls `predicate` every 10 ms until it holds or `timeout` passes; returns
// its last value. For tests that wait on informers and servers.
template <typename Predicate>
bool Eventually(Predicate predicate, absl::Duration timeout) {
  absl::Time end = absl::Now() + timeout;
  while (absl::Now() < end) {
    if (predicate()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return predicate();
}

}  // namespace wm::kube::testing

#endif  // WM_SERVER_KUBE_TESTING_EVENTUALLY_H_
