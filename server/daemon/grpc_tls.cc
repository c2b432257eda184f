#include "server/daemon/grpc_tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "server/admission/tls_files.h"
#include "server/common/file.h"

namespace wm::daemon {
namespace {

// Whether `text` holds at least one PEM certificate. A failed read leaves
// nothing on the thread's OpenSSL error queue for a later reader to find.
bool HasPemCertificate(const std::string& text) {
  BIO* bio = BIO_new_mem_buf(text.data(), static_cast<int>(text.size()));
  if (bio == nullptr) return false;
  X509* certificate = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (certificate == nullptr) {
    ERR_clear_error();
    return false;
  }
  X509_free(certificate);
  return true;
}

absl::Status CheckFiles(const TlsConfig& tls) {
  // Each file readable, named by its flag.
  const std::pair<const char*, const std::string*> files[] = {
      {"--tls-cert", &tls.cert_file},
      {"--tls-key", &tls.key_file},
      {"--tls-client-ca", &tls.client_ca_file}};
  std::string ca;
  for (const auto& [flag, path] : files) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> text = ReadFileToString(*path);
    if (!text.ok()) return FileErrorAs(text.status(), flag, *path);
    if (path == &tls.client_ca_file) ca = *std::move(text);
  }
  // The pair as the webhook loads its own: both PEM, the key the
  // certificate's.
  auto pair = admission::TlsFiles::Load(tls.cert_file, tls.key_file, kGrpcTlsReloadInterval);
  if (!pair.ok()) {
    return absl::Status(pair.status().code(),
                        absl::StrCat("--tls-cert/--tls-key: ", pair.status().message()));
  }
  if (!tls.client_ca_file.empty() && !HasPemCertificate(ca)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--tls-client-ca ", tls.client_ca_file, ": holds no PEM certificate (BEGIN CERTIFICATE)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> GrpcServerCredentials(
    const TlsConfig& tls) {
  if (tls.cert_file.empty()) return grpc::InsecureServerCredentials();
  if (absl::Status checked = CheckFiles(tls); !checked.ok()) return checked;
  const auto interval = static_cast<unsigned int>(absl::ToInt64Seconds(kGrpcTlsReloadInterval));
  auto files = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      tls.key_file, tls.cert_file, tls.client_ca_file, interval);
  grpc::experimental::TlsServerCredentialsOptions options(files);
  options.watch_identity_key_cert_pairs();
  if (!tls.client_ca_file.empty()) options.watch_root_certs();
  options.set_cert_request_type(
      tls.require_client_cert      ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
      : tls.client_ca_file.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                   : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  return grpc::experimental::TlsServerCredentials(options);
}

}  // namespace wm::daemon
