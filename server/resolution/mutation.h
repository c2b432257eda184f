#ifndef WM_SERVER_RESOLUTION_MUTATION_H_
#define WM_SERVER_RESOLUTION_MUTATION_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/resolution/evaluation.h"

namespace wm::resolution {

// Mutations of a workload object through its definition (format §3). Each
// returns the changed copy; the input is never modified. Values are keyed
// by instance id ("" for a single-instance component) and must cover every
// instance ("value not found for instance id: X"); extra keys are ignored.
// Components with instanceIdPath write with assign-zip: `path(P)` must
// yield one location per instance ("array length mismatch: expected N
// values but got M"); others write their one value at every location P
// yields. P must be a path expression ("Invalid path expression").

enum class PodField { kPodTemplateSpec, kPodSpec, kMetadata };

absl::StatusOr<Json> UpdatePodField(Evaluation& eval, const Json& object, int component,
                                    PodField field, const std::map<std::string, Json>& values);

// Values are objects keyed like the fragmented spec ("schedulerName",
// "labels", ...). Per sub-field: skipped when every instance's value is
// empty; otherwise every instance is written (empty ones get "" or null);
// a non-empty value for an undefined sub-path is an error.
absl::StatusOr<Json> UpdateFragmentedPodSpec(Evaluation& eval, const Json& object, int component,
                                             const std::map<std::string, Json>& values);

// Applies the component's suspend (or resume) actions in order: each
// `(path) = value`, with the JSON-encoded value decoded; missing
// intermediate objects are created, null is assigned, not deleted.
absl::StatusOr<Json> ApplySuspend(Evaluation& eval, const Json& object, int component,
                                  bool suspend);

// RFC 6902 JSON Patch turning `before` into `after`.
Json JsonPatch(const Json& before, const Json& after);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_MUTATION_H_
