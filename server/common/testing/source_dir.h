#ifndef WM_SERVER_COMMON_TESTING_SOURCE_DIR_H_
#define WM_SERVER_COMMON_TESTING_SOURCE_DIR_H_

// The checkout's root, for tests that read the repository's own files
// (catalog/, integration_tests/seed/, testdata). Test targets see it as the
// macro WM_SOURCE_DIR (CMake's wm_use_source_dir force-includes this header
// and defines the macro as a call): the path is compiled into one small
// library, not into every test's command line, so that the same sources in
// another directory (a worktree, scripts/check-self-contained's copy) hit
// the compile cache.

namespace wm::testing {

// Absolute, without a trailing slash.
const char* SourceDir();

}  // namespace wm::testing

#endif  // WM_SERVER_COMMON_TESTING_SOURCE_DIR_H_
