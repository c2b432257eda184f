#ifndef WM_SERVER_COMMON_TESTING_OPTIONAL_INPUT_H_
#define WM_SERVER_COMMON_TESTING_OPTIONAL_INPUT_H_

// For tests that need something a fresh clone does not have: a helper binary
// built from the Go module proxy (the gojq oracle), or external public data
// that is never part of the repository:
//
//   $WM_CONFORMANCE_DIR  upstream's catalogs and the operators' recorded
//                        frames (upstream-catalog/, upstream-catalog-older/,
//                        recorded/)
//   $WM_CRDS_DIR         the frameworks' real CRDs (for schema lint)
//
// CI points them at ../shared/conformance and ../shared/crds (.ci/run);
// nothing else ever looks outside the repository. The convention: locally
// such a test skips, with one line that starts with kMissingInputMarker and
// names the variable and the data; in CI (the environment variable CI set,
// as CI runners set it) it fails, so that a missing part can never pass as a
// skipped test. scripts/test counts the skips by that line. Header-only: any
// layer's tests may include it.

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace wm::testing {

// True when the environment variable CI is set (to anything).
inline bool InCi() { return std::getenv("CI") != nullptr; }

// Every skip for want of an optional input starts with this.
inline constexpr std::string_view kMissingInputMarker = "missing optional input: ";

// The directory `sub` (empty: the directory itself) under the one the
// environment variable `variable` names, or "" when the variable is unset or
// that is not a directory.
inline std::string OptionalDir(const char* variable, std::string_view sub) {
  const char* root = std::getenv(variable);
  if (root == nullptr || *root == '\0') return "";
  std::string dir = root;
  if (!sub.empty()) dir.append("/").append(sub);
  return std::filesystem::is_directory(dir) ? dir : "";
}

inline std::string ConformanceDir(std::string_view sub) {
  return OptionalDir("WM_CONFORMANCE_DIR", sub);
}

inline std::string CrdsDir() { return OptionalDir("WM_CRDS_DIR", ""); }

// The one line a test skips with: "missing optional input: VARIABLE/SUB
// (WHAT): <why>".
inline std::string MissingInput(const char* variable, std::string_view sub, std::string_view what) {
  std::string out(kMissingInputMarker);
  out.append(variable);
  if (!sub.empty()) out.append("/").append(sub);
  out.append(" (").append(what).append("): ");
  const char* root = std::getenv(variable);
  if (root == nullptr || *root == '\0') {
    out.append(variable).append(" is unset");
  } else {
    out.append(root).append(sub.empty() ? "" : "/").append(sub).append(" is missing");
  }
  return out;
}

}  // namespace wm::testing

// Skips the current test with `message` (a stream expression naming what is
// missing and how to provide it, starting with kMissingInputMarker), or fails
// it when InCi(). Like GTEST_SKIP, only in a function returning void.
#define WM_SKIP_OR_FAIL_IN_CI(message)                                  \
  do {                                                                  \
    if (::wm::testing::InCi()) {                                        \
      FAIL() << message << " (CI is set: optional parts are required)"; \
    } else {                                                            \
      GTEST_SKIP() << message;                                          \
    }                                                                   \
  } while (false)

// Declares `const std::string var`, the directory `sub` under
// $WM_CONFORMANCE_DIR, or skips (fails in CI) saying that `what` is missing.
// Only in a function returning void.
#define WM_REQUIRE_CONFORMANCE_DIR(var, sub, what)                                       \
  const std::string var = ::wm::testing::ConformanceDir(sub);                            \
  if (var.empty()) {                                                                     \
    WM_SKIP_OR_FAIL_IN_CI(::wm::testing::MissingInput("WM_CONFORMANCE_DIR", sub, what)); \
  }

// The same for the real CRDs under $WM_CRDS_DIR.
#define WM_REQUIRE_CRDS_DIR(var, what)                                           \
  const std::string var = ::wm::testing::CrdsDir();                              \
  if (var.empty()) {                                                             \
    WM_SKIP_OR_FAIL_IN_CI(::wm::testing::MissingInput("WM_CRDS_DIR", "", what)); \
  }

#endif  // WM_SERVER_COMMON_TESTING_OPTIONAL_INPUT_H_
