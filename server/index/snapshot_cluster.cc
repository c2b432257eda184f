#include "server/index/snapshot_cluster.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/common/file.h"
#include "server/common/json_path.h"
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
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(directory, error)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  auto snapshot = std::unique_ptr<SnapshotCluster>(new SnapshotCluster());
  snapshot->registry_ = std::move(registry);
  // One file at a time: parsing on several threads was measured to cost
  // as much later, in resolution, as it saved (objects spread over the
  // threads' allocator arenas), and it would hold more parsed JSON at once.
  for (const fs::path& file : files) {
    // A read error names the file itself; a parse error gets it here.
    absl::StatusOr<std::string> text = ReadFileToString(file.string(), kMaxFileBytes);
    if (!text.ok()) return text.status();
    absl::StatusOr<std::vector<Json>> docs = ParseYamlDocuments(*text);
    if (!docs.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(file.string(), ": ", docs.status().message()));
    }
    if (absl::Status added = snapshot->AddDocuments(file.string(), *docs); !added.ok()) {
      return added;
    }
  }
  return snapshot;
}

absl::Status SnapshotCluster::AddDocuments(const std::string& file, std::vector<Json>& docs) {
  for (Json& doc : docs) {
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
      objects_.Add(GvkFromApiVersion(api_version, kind), object);
      ++objects_count_;
    }
  }
  return absl::OkStatus();
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
