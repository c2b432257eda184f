#ifndef WM_SERVER_ADMISSION_TLS_FILES_H_
#define WM_SERVER_ADMISSION_TLS_FILES_H_

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace wm::admission {

// A server certificate and key read from files and read again when they
// change (a cert-manager renewal, a rotated Secret mounted as a volume), so
// a long-running server never serves an expired certificate. Each Context()
// looks at the files at most once per `check_interval`; when either
// changed (modification time, size or inode: a Secret volume swaps a
// symlink), both are loaded into a new context. A pair that does not load
// (half-written, mismatched) leaves the last good context in use, and the
// error is kept for the logs. Thread-safe; contexts already handed out stay
// valid while held.
class TlsFiles {
 public:
  // Loads the files once; fails (naming the file) when they do not load.
  static absl::StatusOr<std::unique_ptr<TlsFiles>> Load(std::string cert_file, std::string key_file,
                                                        absl::Duration check_interval);

  // The context to accept the next connection with.
  std::shared_ptr<SSL_CTX> Context();
  // Times the files were loaded again after a change (metrics, tests).
  int reloads() const;
  // Why the last reload failed ("" if it did not).
  std::string last_error() const;

 private:
  struct Stamp {
    int64_t mtime_ns = 0, size = 0, inode = 0;
    bool operator==(const Stamp&) const = default;
  };
  TlsFiles(std::string cert_file, std::string key_file, absl::Duration check_interval);
  static absl::StatusOr<Stamp> StampOf(const std::string& path);
  absl::StatusOr<std::shared_ptr<SSL_CTX>> Build() const;

  const std::string cert_file_, key_file_;
  const absl::Duration check_interval_;
  mutable std::mutex mu_;
  std::shared_ptr<SSL_CTX> context_;
  Stamp cert_stamp_, key_stamp_;
  absl::Time checked_ = absl::InfinitePast();
  int reloads_ = 0;
  std::string last_error_;
};

}  // namespace wm::admission

#endif  // WM_SERVER_ADMISSION_TLS_FILES_H_
