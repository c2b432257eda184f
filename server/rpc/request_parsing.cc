#include "server/rpc/request_parsing.h"

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/stubs/common.h"
#include "grpcpp/impl/codegen/proto_utils.h"
#include "grpcpp/support/slice.h"

namespace wm::rpc {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// The most bytes of a fault's text in the status message, which travels in
// the trailers: a path deep into a google.protobuf.Struct can be longer
// (".fields[0].value.struct_value" per level), and is then cut in the middle.
constexpr size_t kMaxFaultBytes = 400;

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// Reads a varint at `*at`, advancing past it; false when `bytes` end first
// or it is longer than 10 bytes.
bool ReadVarint(absl::string_view bytes, size_t* at, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 64 && *at < bytes.size(); shift += 7) {
    uint8_t byte = static_cast<uint8_t>(bytes[(*at)++]);
    *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// The first fault that keeps `bytes` from being a `type`, the message at
// `path` ("changes[0]", or "" for the request); empty when none is found.
// Walks the wire format itself: nested messages are looked at in place, so
// a hostile request costs no copies, and only as deep as protobuf parses.
std::string FaultIn(const Descriptor& type, absl::string_view bytes, const std::string& path,
                    int depth) {
  const int max_depth = google::protobuf::io::CodedInputStream::GetDefaultRecursionLimit();
  if (depth > max_depth) {
    return absl::StrCat(path, " nests messages more than ", max_depth, " levels deep");
  }
  absl::flat_hash_map<int, int> occurrences;  // of each field number so far
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t start = at;
    auto malformed = [&] {
      return absl::StrCat(path.empty() ? "the field" : "a field of " + path, " at byte ", start,
                          " is truncated or malformed");
    };
    uint64_t tag = 0, skipped = 0;
    if (!ReadVarint(bytes, &at, &tag) || tag >> 3 == 0 || tag >> 3 > FieldDescriptor::kMaxNumber) {
      return malformed();
    }
    switch (tag & 7) {
      case 0:  // varint
        if (!ReadVarint(bytes, &at, &skipped)) return malformed();
        continue;
      case 1:  // fixed64
      case 5:  // fixed32
        at += (tag & 7) == 1 ? 8 : 4;
        if (at > bytes.size()) return malformed();
        continue;
      case 2:  // length-delimited: a string, bytes, a message or packed values
        break;
      case 3:  // a group: none in these protos; the parser's reason is not found
        return "";
      default:  // the end of a group never started, invalid wire types
        return malformed();
    }
    uint64_t length = 0;
    if (!ReadVarint(bytes, &at, &length) || length > bytes.size() - at) return malformed();
    absl::string_view value = bytes.substr(at, length);
    at += length;
    const FieldDescriptor* field = type.FindFieldByNumber(static_cast<int>(tag >> 3));
    if (field == nullptr) continue;  // unknown fields are kept, not checked
    std::string field_path = path.empty() ? field->name() : absl::StrCat(path, ".", field->name());
    if (field->is_repeated()) {
      absl::StrAppend(&field_path, "[", occurrences[field->number()]++, "]");
    }
    if (field->type() == FieldDescriptor::TYPE_STRING &&
        field->file()->syntax() == google::protobuf::FileDescriptor::SYNTAX_PROTO3 &&
        // The check protobuf's parser makes.
        !google::protobuf::internal::IsStructurallyValidUTF8(value.data(),
                                                             static_cast<int>(value.size()))) {
      return absl::StrCat(field_path, " is not valid UTF-8 (a proto3 string field must be; bytes ",
                          "belong in a bytes field)");
    }
    if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
      std::string fault = FaultIn(*field->message_type(), value, field_path, depth + 1);
      if (!fault.empty()) return fault;
    }
  }
  return "";
}

}  // namespace

absl::Status ParseRequest(const grpc::ByteBuffer& bytes, google::protobuf::Message* request) {
  // A small request arrives in one slice: parsed in place, it needs neither
  // a second byte buffer nor a stream over it (a visible part of a cached
  // ResolveWorkload's own cost).
  grpc::Slice single;
  if (bytes.TrySingleSlice(&single).ok()) {
    if (request->ParseFromArray(single.begin(), static_cast<int>(single.size()))) {
      return absl::OkStatus();
    }
  } else {
    grpc::ByteBuffer copy(bytes);  // shares the slices; Deserialize consumes them
    if (grpc::SerializationTraits<google::protobuf::Message>::Deserialize(&copy, request).ok()) {
      return absl::OkStatus();
    }
  }
  std::string fault = FaultIn(*request->GetDescriptor(), Flatten(bytes), "", 0);
  if (fault.size() > kMaxFaultBytes) {  // ASCII (field names, numbers): cut anywhere
    fault = absl::StrCat(fault.substr(0, kMaxFaultBytes / 2), "…",
                         fault.substr(fault.size() - kMaxFaultBytes / 2));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("request is not a valid ", request->GetDescriptor()->full_name(), ": ",
                   fault.empty() ? "the bytes do not parse as one" : fault));
}

}  // namespace wm::rpc
