#include "server/web/workload_path.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/web/query.h"

namespace wm::web {

absl::StatusOr<WorkloadPath> ParseWorkloadPath(absl::string_view below_root) {
  std::vector<absl::string_view> parts = absl::StrSplit(below_root, '/');
  WorkloadPath out;
  size_t at = 0;
  if (!parts.empty() && parts[0] == "namespaces" && parts.size() >= 5 && parts[2] == "workloads") {
    at = 3;
  } else if (!parts.empty() && parts[0] == "workloads" && parts.size() >= 3) {
    at = 1;
  } else {
    at = parts.size();  // no shape
  }
  size_t rest = parts.size() - std::min(at, parts.size());
  bool shaped = at < parts.size() && (rest == 2 || (rest == 3 && parts[at + 2] == "gang"));
  if (!shaped) {
    return absl::NotFoundError(
        "no such API path: want namespaces/{namespace}/workloads/{kind}/{name}[/gang] or "
        "workloads/{kind}/{name}[/gang] below api/v1/");
  }
  std::vector<std::string> decoded;
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::StatusOr<std::string> segment = PercentDecode(parts[i]);
    if (!segment.ok()) return segment.status();
    if (segment->empty()) {
      return absl::InvalidArgumentError(absl::StrCat("path segment ", i + 1, " is empty"));
    }
    decoded.push_back(*std::move(segment));
  }
  if (at == 3) out.ref.set_namespace_(decoded[1]);
  // "JobSet" is a kind; "jobsets" or "jobset" a resource, as kubectl reads
  // them (kinds are UpperCamelCase, resources lowercase).
  if (absl::ascii_isupper(static_cast<unsigned char>(decoded[at].front()))) {
    out.ref.set_kind(decoded[at]);
  } else {
    out.ref.set_resource(decoded[at]);
  }
  out.ref.set_name(decoded[at + 1]);
  out.gang = rest == 3;
  return out;
}

}  // namespace wm::web
