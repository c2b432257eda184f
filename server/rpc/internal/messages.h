// JSON in and out of the service's messages: objects a caller sends (checked
// as the apiserver would check their metadata), protobuf to and from JSON,
// serialization into gRPC byte buffers, and the resolution of an inline
// workload. Internal to the rpc layer.
#ifndef WM_SERVER_RPC_INTERNAL_MESSAGES_H_
#define WM_SERVER_RPC_INTERNAL_MESSAGES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/common/json.h"
#include "server/common/json_reader.h"
#include "server/expressions/engine.h"
#include "server/index/cluster.h"
#include "server/kube/cluster_view.h"
#include "workloadmap/v1/service.pb.h"

namespace wm::rpc::internal {

// The metadata fields resolution reads have the types Kubernetes gives
// them, so a malformed object is refused as the apiserver would refuse it
// rather than resolved as if the field were absent.
absl::Status CheckObjectMeta(const Json& object, const std::string& field);

absl::StatusOr<Json> ParseJsonField(const std::string& text, const std::string& field);

template <typename Message>
absl::Status SerializeMessage(const Message& message, grpc::ByteBuffer* out) {
  bool own_buffer = false;
  grpc::Status status = grpc::SerializationTraits<Message>::Serialize(message, out, &own_buffer);
  if (!status.ok()) return absl::InternalError(status.error_message());
  return absl::OkStatus();
}

absl::StatusOr<Gvk> GvkOf(const Json& object, const std::string& field);

template <typename Message>
absl::Status JsonToMessage(const Json& json, const std::string& field, Message* out) {
  auto status = google::protobuf::util::JsonStringToMessage(json.dump(), out);
  if (!status.ok()) {
    // The only way a parsed document fails here is depth: protobuf nests
    // at most 100 messages, and a JSON object level costs a Struct three.
    return absl::InvalidArgumentError(absl::StrCat(
        field,
        ": nests too deeply to be returned as a google.protobuf.Struct (protobuf allows 100 "
        "nested messages, about 33 levels of objects): ",
        std::string(status.message())));
  }
  return absl::OkStatus();
}

template <typename Message>
Json MessageToJson(const Message& message) {
  std::string text;
  (void)google::protobuf::util::MessageToJsonString(message, &text);
  // Our reader, not nlohmann's: protobuf writes a Struct's fields in its
  // map's order, and ours sorts an object's members once, not one by one.
  absl::StatusOr<Json> json = ParseJson(text);
  return json.ok() ? *std::move(json) : Json(Json::value_t::discarded);
}

// Resolves an object the caller sent, with the definitions of `cluster`,
// if it comes with at most `max_objects` pods and owners, into `out` (on
// its arena, if it has one: resolution::ResolveWorkloadInto). REQUIRES:
// `out` is empty.
absl::Status ResolveInline(expressions::Engine& engine, const index::Cluster& cluster,
                           const workloadmap::v1::InlineWorkload& in, bool gang, int max_objects,
                           workloadmap::v1::ResolvedWorkload& out);

}  // namespace wm::rpc::internal

#endif  // WM_SERVER_RPC_INTERNAL_MESSAGES_H_
