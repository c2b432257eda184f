#ifndef WM_SERVER_COMMON_TESTING_FAKE_CLOCK_H_
#define WM_SERVER_COMMON_TESTING_FAKE_CLOCK_H_

#include <functional>
#include <memory>

#include "absl/time/time.h"

namespace wm::testing {

// A clock tests move by hand, for the caches that take a time source
// (credential, token and access caches), so that expiry needs no sleeping.
// Copies share the time.
class FakeClock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000))
      : now_(std::make_shared<absl::Time>(start)) {}
  std::function<absl::Time()> AsClock() const {
    auto now = now_;
    return [now] { return *now; };
  }
  void Advance(absl::Duration d) { *now_ += d; }
  void Set(absl::Time t) { *now_ = t; }
  absl::Time Now() const { return *now_; }

 private:
  std::shared_ptr<absl::Time> now_;
};

}  // namespace wm::testing

#endif  // WM_SERVER_COMMON_TESTING_FAKE_CLOCK_H_
