#ifndef WM_SERVER_RPC_REQUEST_PARSING_H_
#define WM_SERVER_RPC_REQUEST_PARSING_H_

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "grpcpp/support/byte_buffer.h"

namespace wm::rpc {

// Parses the bytes of a call into its request message. Bytes that are not
// one fail with INVALID_ARGUMENT "request is not a valid
// workloadmap.v1.ListWorkloadsRequest: <why>", where why names the first
// fault: a field that is truncated or malformed (with its byte offset in
// its message), a string field that is not UTF-8 (proto3 requires it; with
// its path, e.g. `changes[0].component`), or nesting past protobuf's 100
// levels; a longer reason than 400 bytes (a path deep into a Struct) is cut
// in the middle. (gRPC itself would answer UNIMPLEMENTED without a message.)
//
// The common case costs a plain parse: the bytes are looked at again only
// when it fails (flattened once, nested messages read in place, no deeper
// than protobuf parses).
absl::Status ParseRequest(const grpc::ByteBuffer& bytes, google::protobuf::Message* request);

}  // namespace wm::rpc

#endif  // WM_SERVER_RPC_REQUEST_PARSING_H_
