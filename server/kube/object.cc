#include "server/kube/object.h"

#include <simdjson.h>

#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "server/common/json_reader.h"
#include "server/common/json_string.h"
#include "server/common/simdjson_tree.h"

namespace wm::kube {
namespace {

constexpr std::string_view kLastApplied = "kubectl.kubernetes.io/last-applied-configuration";

using simdjson::dom::element;

std::string_view StringAt(const element& object, std::string_view key) {
  std::string_view value;
  if (object[key].get(value) != simdjson::SUCCESS) return {};
  return value;
}

// Our JSON tree of a decoded object. Always built: a decoded document
// nests no deeper than the parser's own bound.
Json ToJson(const element& value) {
  return JsonFromSimdjson(value, simdjson::DEFAULT_MAX_DEPTH).value_or(Json());
}

void StripMetadataNoise(Json& object) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return;
  metadata->erase("managedFields");
  if (auto annotations = metadata->find("annotations");
      annotations != metadata->end() && annotations->is_object()) {
    annotations->erase(std::string(kLastApplied));
    if (annotations->empty()) metadata->erase(annotations);
  }
}

// Writes {"k":v,...} members one at a time, handling the commas.
class ObjectWriter {
 public:
  // `open`: write the '{' (else the caller already did, or wants members only).
  explicit ObjectWriter(std::string& out, bool open = true) : out_(out) {
    if (open) out_.push_back('{');
  }
  void Raw(std::string_view key, std::string_view json) {
    Key(key);
    out_ += json;
  }
  // Appends members written elsewhere ("\"a\":1,\"b\":2").
  void Raw(std::string_view members) {
    if (!first_) out_.push_back(',');
    first_ = false;
    out_ += members;
  }
  void Element(std::string_view key, const element& value) { Raw(key, simdjson::minify(value)); }
  void String(std::string_view key, std::string_view value) {
    Key(key);
    AppendJsonString(value, out_);
  }
  // Copies `key` from `from` when present.
  void Copy(const element& from, std::string_view key) {
    element value;
    if (from[key].get(value) == simdjson::SUCCESS) Element(key, value);
  }
  void Key(std::string_view key) {
    if (!first_) out_.push_back(',');
    first_ = false;
    AppendJsonString(key, out_);
    out_.push_back(':');
  }
  void Close() { out_.push_back('}'); }

 private:
  std::string& out_;
  bool first_ = true;
};

void WriteContainers(ObjectWriter& writer, const element& spec, std::string_view key,
                     bool keep_restart_policy, std::string& out) {
  simdjson::dom::array containers;
  if (spec[key].get(containers) != simdjson::SUCCESS) return;
  writer.Key(key);
  out.push_back('[');
  bool first = true;
  for (element container : containers) {
    if (!first) out.push_back(',');
    first = false;
    ObjectWriter c(out);
    c.Copy(container, "resources");
    if (keep_restart_policy) c.Copy(container, "restartPolicy");
    c.Close();
  }
  out.push_back(']');
}

std::vector<OwnerReference> ReadOwners(const element& metadata) {
  std::vector<OwnerReference> owners;
  simdjson::dom::array refs;
  if (metadata["ownerReferences"].get(refs) != simdjson::SUCCESS) return owners;
  for (element ref : refs) {
    OwnerReference owner;
    owner.uid = std::string(StringAt(ref, "uid"));
    owner.kind = std::string(StringAt(ref, "kind"));
    owner.name = std::string(StringAt(ref, "name"));
    bool controller = false;
    owner.controller = ref["controller"].get(controller) == simdjson::SUCCESS && controller;
    owners.push_back(std::move(owner));
  }
  return owners;
}

}  // namespace

// Interned text fragments of compact pods: one copy of each distinct text,
// shared by every pod that has it, freed with the last of them.
class CachedObject::Pool {
 public:
  static Pool& Get() {
    static Pool* pool = new Pool();
    return *pool;
  }

  // The shared fragment equal to `text`; `owners` are parsed only when the
  // text is new.
  Fragment Intern(std::string text, const element* owners_from = nullptr) {
    std::unique_lock lock(mu_);
    if (auto it = map_.find(text); it != map_.end()) {
      if (Fragment existing = it->second.lock()) return existing;
      // Expired: its last holder is releasing it (Release waits for the
      // lock). Erase rather than overwrite the entry: the key views the
      // expiring Text, which Release is about to delete.
      map_.erase(it);
    }
    auto* value = new Text{std::move(text), {}};
    if (owners_from != nullptr) value->owners = ReadOwners(*owners_from);
    Fragment fragment(value, [this](const Text* t) { Release(t); });
    map_[value->text] = fragment;
    return fragment;
  }

 private:
  void Release(const Text* text) {
    {
      std::unique_lock lock(mu_);
      // Only if the entry is still this one: the text may have been
      // interned again after this fragment's last holder let go.
      if (auto it = map_.find(text->text); it != map_.end() && it->second.expired()) {
        map_.erase(it);
      }
    }
    delete text;
  }

  std::mutex mu_;
  absl::flat_hash_map<absl::string_view, std::weak_ptr<const Text>> map_;
};

void CachedObject::CompactParts(const element& pod, const element& metadata, Fragment* parts) {
  Pool& pool = Pool::Get();
  std::string text;
  {
    ObjectWriter t(text, /*open=*/false);
    t.Copy(metadata, "creationTimestamp");
    t.Copy(metadata, "deletionTimestamp");
  }
  if (!text.empty()) parts[kTimestamps] = pool.Intern(text);
  element value;
  if (metadata["labels"].get(value) == simdjson::SUCCESS) {
    parts[kLabels] = pool.Intern(simdjson::minify(value));
  }
  simdjson::dom::object annotations;
  if (metadata["annotations"].get(annotations) == simdjson::SUCCESS) {
    text.clear();
    ObjectWriter a(text);
    for (auto field : annotations) {
      if (field.key == kLastApplied) continue;
      a.Element(field.key, field.value);
    }
    a.Close();
    if (text != "{}") parts[kAnnotations] = pool.Intern(std::move(text));
  }
  if (metadata["ownerReferences"].get(value) == simdjson::SUCCESS) {
    parts[kOwnerRefs] = pool.Intern(simdjson::minify(value), &metadata);
  }
  element spec, status;
  if (pod["spec"].get(spec) == simdjson::SUCCESS) {
    text.clear();
    ObjectWriter s(text);
    s.Copy(spec, "nodeName");
    s.Copy(spec, "schedulerName");
    WriteContainers(s, spec, "containers", false, text);
    WriteContainers(s, spec, "initContainers", true, text);
    s.Copy(spec, "overhead");
    s.Copy(spec, "resources");
    s.Close();
    parts[kSpec] = pool.Intern(std::move(text));
  }
  if (pod["status"].get(status) == simdjson::SUCCESS) {
    text.clear();
    ObjectWriter s(text);
    s.Copy(status, "phase");
    s.Copy(status, "reason");
    simdjson::dom::array conditions;
    if (status["conditions"].get(conditions) == simdjson::SUCCESS) {
      s.Key("conditions");
      text.push_back('[');
      bool first = true;
      for (element condition : conditions) {
        if (!first) text.push_back(',');
        first = false;
        ObjectWriter c(text);
        for (std::string_view key : {"type", "status", "reason"}) c.Copy(condition, key);
        c.Close();
      }
      text.push_back(']');
    }
    s.Close();
    parts[kStatus] = pool.Intern(std::move(text));
  }
}

std::string ObjectKey(std::string_view namespace_, std::string_view name) {
  std::string key(namespace_);
  if (!key.empty()) key += '/';
  key += name;
  return key;
}

ObjectShape CachedShapeFor(const Gvk& gvk) {
  return gvk == PodGvk() ? ObjectShape::kCompactPod : ObjectShape::kFull;
}

absl::Status CachedObject::DecodeIdentity(const element& metadata, CachedObject& cached) {
  std::string_view name = StringAt(metadata, "name");
  if (name.empty()) return absl::InvalidArgumentError("object without metadata.name");
  cached.key_ = ObjectKey(StringAt(metadata, "namespace"), name);
  cached.uid_ = std::string(StringAt(metadata, "uid"));
  cached.resource_version_ = std::string(StringAt(metadata, "resourceVersion"));
  if (cached.shape_ != ObjectShape::kCompactPod) {
    cached.owners_ = std::make_shared<const std::vector<OwnerReference>>(ReadOwners(metadata));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const CachedObject>> CachedObject::Decode(const element& object,
                                                                         ObjectShape shape) {
  element metadata;
  if (!object.is_object() || object["metadata"].get(metadata) != simdjson::SUCCESS ||
      !metadata.is_object()) {
    return absl::InvalidArgumentError("object without metadata");
  }
  auto cached = std::make_shared<CachedObject>();
  cached->shape_ = shape;
  if (absl::Status s = DecodeIdentity(metadata, *cached); !s.ok()) return s;
  if (shape == ObjectShape::kCompactPod) {
    CompactParts(object, metadata, cached->parts_);
    const Fragment& refs = cached->parts_[kOwnerRefs];
    cached->owners_ = refs != nullptr
                          ? std::shared_ptr<const std::vector<OwnerReference>>(refs, &refs->owners)
                          : NoOwners();
    return std::shared_ptr<const CachedObject>(std::move(cached));
  }
  if (shape == ObjectShape::kMetadata) {
    auto document = std::make_shared<Json>(Json::object());
    for (std::string_view key : {"apiVersion", "kind", "metadata"}) {
      element value;
      if (object[key].get(value) == simdjson::SUCCESS)
        (*document)[std::string(key)] = ToJson(value);
    }
    StripMetadataNoise(*document);
    cached->document_ = std::move(document);
  } else {
    auto document = std::make_shared<Json>(ToJson(object));
    StripMetadataNoise(*document);
    cached->document_ = std::move(document);
  }
  return std::shared_ptr<const CachedObject>(std::move(cached));
}

std::shared_ptr<const CachedObject> CachedObject::FromJson(Json object, ObjectShape shape) {
  simdjson::dom::parser parser;
  element parsed;
  if (shape != ObjectShape::kFull) {
    std::string text = object.dump();
    if (parser.parse(text).get(parsed) != simdjson::SUCCESS) return nullptr;
    absl::StatusOr<std::shared_ptr<const CachedObject>> decoded = Decode(parsed, shape);
    return decoded.ok() ? *decoded : nullptr;
  }
  // The tree is kept as it is: only the metadata goes through the decoder,
  // rather than the whole object to text and back (a snapshot's start is
  // mostly this).
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return nullptr;
  std::string text = metadata->dump();
  if (parser.parse(text).get(parsed) != simdjson::SUCCESS) return nullptr;
  auto cached = std::make_shared<CachedObject>();
  cached->shape_ = shape;
  if (!DecodeIdentity(parsed, *cached).ok()) return nullptr;
  auto document = std::make_shared<Json>(std::move(object));
  StripMetadataNoise(*document);
  cached->document_ = std::move(document);
  return cached;
}

const std::string& CachedObject::controller_uid() const {
  static const std::string kNone;
  for (const OwnerReference& owner : *owners_) {
    if (owner.controller) return owner.uid;
  }
  return kNone;
}

std::shared_ptr<const std::vector<OwnerReference>> CachedObject::NoOwners() {
  static const auto* none = new std::shared_ptr<const std::vector<OwnerReference>>(
      std::make_shared<const std::vector<OwnerReference>>());
  return *none;
}

std::shared_ptr<const Json> CachedObject::Document() const {
  if (document_ != nullptr) return document_;
  // Reassemble the compact pod's text and parse it.
  std::string text = R"({"apiVersion":"v1","kind":"Pod","metadata":{)";
  size_t slash = key_.find('/');
  ObjectWriter identity(text, /*open=*/false);
  if (slash != std::string::npos) identity.String("namespace", key_.substr(0, slash));
  identity.String("name", slash == std::string::npos ? key_ : key_.substr(slash + 1));
  identity.String("uid", uid_);
  identity.String("resourceVersion", resource_version_);
  if (parts_[kTimestamps] != nullptr) identity.Raw(parts_[kTimestamps]->text);
  if (parts_[kLabels] != nullptr) identity.Raw("labels", parts_[kLabels]->text);
  if (parts_[kAnnotations] != nullptr) identity.Raw("annotations", parts_[kAnnotations]->text);
  if (parts_[kOwnerRefs] != nullptr) identity.Raw("ownerReferences", parts_[kOwnerRefs]->text);
  text += '}';
  if (parts_[kSpec] != nullptr) absl::StrAppend(&text, R"(,"spec":)", parts_[kSpec]->text);
  if (parts_[kStatus] != nullptr) absl::StrAppend(&text, R"(,"status":)", parts_[kStatus]->text);
  text += '}';
  absl::StatusOr<Json> document = ParseJson(text, {.max_depth = simdjson::DEFAULT_MAX_DEPTH});
  return std::make_shared<const Json>(document.ok() ? *std::move(document)
                                                    : Json(Json::value_t::discarded));
}

size_t CachedObject::ApproximateBytes() const {
  auto heap = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; };
  size_t bytes = sizeof(*this) + heap(key_) + heap(uid_) + heap(resource_version_);
  for (const Fragment& part : parts_) {
    // A shared fragment counts its share.
    if (part != nullptr) bytes += (sizeof(Text) + heap(part->text)) / part.use_count();
  }
  if (shape_ != ObjectShape::kCompactPod) {
    bytes += owners_->capacity() * sizeof(OwnerReference);
    for (const OwnerReference& owner : *owners_) {
      bytes += heap(owner.uid) + heap(owner.kind) + heap(owner.name);
    }
  }
  return bytes;
}

}  // namespace wm::kube
