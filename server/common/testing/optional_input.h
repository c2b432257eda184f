#ifndef WM_SERVER_COMMON_TESTING_OPTIONAL_INPUT_H_
#define WM_SERVER_COMMON_TESTING_OPTIONAL_INPUT_H_

// For tests that need something a fresh clone may lack (a helper binary
// built from the Go module proxy, the ../shared test data). The convention:
// locally such a test skips and says what it needs by name; in CI (the
// environment variable CI set, as CI runners set it) it fails, so
// that a missing part can never pass as a skipped test. Header-only: any
// layer's tests may include it.

#include <cstdlib>

#include "gtest/gtest.h"

namespace wm::testing {

// True when the environment variable CI is set (to anything).
inline bool InCi() { return std::getenv("CI") != nullptr; }

}  // namespace wm::testing

// Skips the current test with `message` (a stream expression naming what is
// missing and how to provide it), or fails it when InCi(). Like GTEST_SKIP,
// only in a function returning void.
#define WM_SKIP_OR_FAIL_IN_CI(message)                                  \
  do {                                                                  \
    if (::wm::testing::InCi()) {                                        \
      FAIL() << message << " (CI is set: optional parts are required)"; \
    } else {                                                            \
      GTEST_SKIP() << message;                                          \
    }                                                                   \
  } while (false)

#endif  // WM_SERVER_COMMON_TESTING_OPTIONAL_INPUT_H_
