#include "server/index/snapshot_cluster.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/common/cpus.h"
#include "server/common/file.h"
#include "server/common/json_path.h"
#include "server/common/work_pool.h"
#include "server/common/yaml_json.h"

namespace wm::index {
namespace {

// A snapshot is the operator's own files (kubectl get -o yaml of a whole
// cluster can be large); the bound only keeps a wrong path (a disk image)
// from being read whole.
constexpr size_t kMaxFileBytes = size_t{1} << 30;

}  // namespace

absl::StatusOr<std::unique_ptr<SnapshotCluster>> SnapshotCluster::Load(
    const std::string& directory, std::shared_ptr<const definitions::Registry> registry) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error)) {
    return absl::InvalidArgumentError(absl::StrCat("--snapshot ", directory, ": not a directory"));
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory, error)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  // Files are read and decoded on every usable CPU (a start is mostly
  // YAML), each file whole by one thread; the objects are added in file
  // order, so a later file's object replaces an earlier one's as it would
  // one at a time, and the first failing file in that order is reported.
  std::vector<absl::StatusOr<std::vector<Decoded>>> decoded(files.size());
  size_t threads = std::clamp<size_t>(AvailableCpus(), 1, std::max<size_t>(files.size(), 1));
  WorkPool helpers(static_cast<int>(threads - 1));
  ForEachIndex(&helpers, static_cast<int>(threads - 1), files.size(), [&](size_t i) {
    decoded[i] = DecodeFile(files[i]);
    return decoded[i].ok();
  });
  auto snapshot = std::unique_ptr<SnapshotCluster>(new SnapshotCluster());
  snapshot->registry_ = std::move(registry);
  for (auto& file : decoded) {
    if (!file.ok()) return file.status();  // those after it may not have been claimed
    for (auto& [gvk, object] : *file) {
      snapshot->objects_.Add(gvk, std::move(object));
      ++snapshot->objects_count_;
    }
    file->clear();
  }
  return snapshot;
}

absl::StatusOr<std::vector<SnapshotCluster::Decoded>> SnapshotCluster::DecodeFile(
    const std::string& file) {
  // A read error names the file itself; a parse error gets it here.
  absl::StatusOr<std::string> text = ReadFileToString(file, kMaxFileBytes);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<Json>> docs = ParseYamlDocuments(*text);
  if (!docs.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": ", docs.status().message()));
  }
  std::vector<Decoded> out;
  for (Json& doc : *docs) {
    // A List (kubectl get -o yaml) holds its objects in items.
    std::vector<Json> objects;
    if (doc.is_object() && doc.value("kind", "") == "List" && doc.contains("items")) {
      for (Json& item : doc["items"]) objects.push_back(std::move(item));
    } else {
      objects.push_back(std::move(doc));
    }
    for (Json& object : objects) {
      std::string api_version = FindString(object, {"apiVersion"});
      std::string kind = FindString(object, {"kind"});
      std::string name = FindString(object, {"metadata", "name"});
      if (api_version.empty() || kind.empty() || name.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": every object needs apiVersion, kind and metadata.name"));
      }
      if (FindString(object, {"metadata", "namespace"}).empty()) {
        object["metadata"]["namespace"] = "default";
      }
      if (FindString(object, {"metadata", "uid"}).empty()) {
        object["metadata"]["uid"] = absl::StrCat(
            "snapshot:", kind, "/", FindString(object, {"metadata", "namespace"}), "/", name);
      }
      Gvk gvk = GvkFromApiVersion(api_version, kind);
      out.emplace_back(gvk,
                       kube::CachedObject::FromJson(std::move(object), kube::CachedShapeFor(gvk)));
    }
  }
  return out;
}

std::string SnapshotCluster::KindProblem(const Gvk& gvk) const {
  return objects_.StoreFor(gvk) ? "" : "no object of this kind in the snapshot";
}

absl::StatusOr<std::string> SnapshotCluster::Patch(const Gvk&, const std::string&,
                                                   const std::string&, const Json&,
                                                   const kube::Impersonation*) {
  return absl::FailedPreconditionError("the snapshot is read-only: mutations are dry runs only");
}

void SnapshotCluster::Feed(WorkloadIndex& index) const { index.Resync(name_); }

}  // namespace wm::index
