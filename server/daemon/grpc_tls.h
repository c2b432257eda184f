#ifndef WM_SERVER_DAEMON_GRPC_TLS_H_
#define WM_SERVER_DAEMON_GRPC_TLS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/server_credentials.h"
#include "server/daemon/config.h"

namespace wm::daemon {

// How soon the gRPC listeners serve a renewed certificate: gRPC reads the
// files again at this interval (three small files: cheap).
inline constexpr absl::Duration kGrpcTlsReloadInterval = absl::Seconds(2);

// The credentials of the daemon's TCP listeners: plaintext without
// --tls-cert, else TLS with --tls-cert/--tls-key, verifying client
// certificates against --tls-client-ca when one is given (required with
// --tls-require-client-cert).
//
// The files are checked here, once: a path that does not read, a file that
// is not PEM, or a key of another certificate fails with the flag and the
// reason, where gRPC alone would fail to listen with "Handshaker factory
// creation failed". From then on gRPC reads them again every
// kGrpcTlsReloadInterval and gives what changed (a cert-manager renewal, a
// Secret volume's atomic swap) to new connections; open connections keep
// the certificate they were made with. Replace the files together (a
// Secret volume does): while one is missing or half-written, new
// handshakes fail until both are whole again.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> GrpcServerCredentials(
    const TlsConfig& tls);

}  // namespace wm::daemon

#endif  // WM_SERVER_DAEMON_GRPC_TLS_H_
