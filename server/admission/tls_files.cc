#include "server/admission/tls_files.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace wm::admission {
namespace {

std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

}  // namespace

TlsFiles::TlsFiles(std::string cert_file, std::string key_file, absl::Duration check_interval)
    : cert_file_(std::move(cert_file)),
      key_file_(std::move(key_file)),
      check_interval_(check_interval) {}

absl::StatusOr<std::unique_ptr<TlsFiles>> TlsFiles::Load(std::string cert_file,
                                                         std::string key_file,
                                                         absl::Duration check_interval) {
  std::unique_ptr<TlsFiles> files(
      new TlsFiles(std::move(cert_file), std::move(key_file), check_interval));
  auto cert_stamp = StampOf(files->cert_file_);
  if (!cert_stamp.ok()) return cert_stamp.status();
  auto key_stamp = StampOf(files->key_file_);
  if (!key_stamp.ok()) return key_stamp.status();
  auto context = files->Build();
  if (!context.ok()) return context.status();
  files->context_ = *std::move(context);
  files->cert_stamp_ = *cert_stamp;
  files->key_stamp_ = *key_stamp;
  files->checked_ = absl::Now();
  return files;
}

absl::StatusOr<TlsFiles::Stamp> TlsFiles::StampOf(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  return Stamp{static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec,
               static_cast<int64_t>(info.st_size), static_cast<int64_t>(info.st_ino)};
}

absl::StatusOr<std::shared_ptr<SSL_CTX>> TlsFiles::Build() const {
  std::shared_ptr<SSL_CTX> context(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (context == nullptr) return absl::InternalError("SSL_CTX_new: " + OpenSslError());
  // The apiserver speaks TLS 1.2 and 1.3; nothing older is offered.
  SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(context.get(), cert_file_.c_str()) != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("the certificate ", cert_file_, " does not load: ", OpenSslError()));
  }
  if (SSL_CTX_use_PrivateKey_file(context.get(), key_file_.c_str(), SSL_FILETYPE_PEM) != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("the key ", key_file_, " does not load: ", OpenSslError()));
  }
  if (SSL_CTX_check_private_key(context.get()) != 1) {
    return absl::FailedPreconditionError(absl::StrCat("the key ", key_file_,
                                                      " does not match the certificate ",
                                                      cert_file_, ": ", OpenSslError()));
  }
  return context;
}

std::shared_ptr<SSL_CTX> TlsFiles::Context() {
  std::unique_lock lock(mu_);
  absl::Time now = absl::Now();
  if (now - checked_ < check_interval_) return context_;
  checked_ = now;
  auto cert_stamp = StampOf(cert_file_);
  auto key_stamp = StampOf(key_file_);
  if (!cert_stamp.ok() || !key_stamp.ok()) {
    last_error_ =
        std::string((cert_stamp.ok() ? key_stamp.status() : cert_stamp.status()).message());
    return context_;
  }
  if (*cert_stamp == cert_stamp_ && *key_stamp == key_stamp_) return context_;
  auto context = Build();
  if (!context.ok()) {
    // Perhaps half-written: the stamps are not taken, so the next check
    // tries again.
    last_error_ = std::string(context.status().message());
    return context_;
  }
  context_ = *std::move(context);
  cert_stamp_ = *cert_stamp;
  key_stamp_ = *key_stamp;
  ++reloads_;
  last_error_.clear();
  return context_;
}

int TlsFiles::reloads() const {
  std::unique_lock lock(mu_);
  return reloads_;
}

std::string TlsFiles::last_error() const {
  std::unique_lock lock(mu_);
  return last_error_;
}

}  // namespace wm::admission
