#ifndef WM_SERVER_RESOLUTION_POD_SPEC_VALIDATION_H_
#define WM_SERVER_RESOLUTION_POD_SPEC_VALIDATION_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "server/common/json.h"

namespace wm::resolution {

// Checks of pod template values as the apiserver makes them
// (k8s.io/kubernetes pkg/apis/core/validation), so that a dry run refuses
// what the apply, or the pods it creates, would be refused for. Each
// returns OK or InvalidArgument naming the exact field: `field` is where the
// value is in the caller's request ("changes[0].tolerations"), extended
// with keys and indexes ("changes[0].tolerations[1].operator"). Caller text
// in a message is quoted by QuoteUserText. Fields of tolerations, affinity
// terms and resources that Kubernetes does not define are refused (the
// apiserver would drop them, which a caller would not want either).

// The total size of a template's annotations, keys plus values.
inline constexpr size_t kMaxAnnotationsTotalBytes = 256 << 10;

// Scheduler and priority class names: DNS subdomains.
absl::Status ValidateDnsSubdomainName(const Json& name, const std::string& field);

// Maps of label keys (qualified names) to label values; node selectors too.
absl::Status ValidateLabels(const Json& labels, const std::string& field);

// Maps of annotation keys (qualified names, compared in lower case) to
// strings, at most kMaxAnnotationsTotalBytes in all.
absl::Status ValidateAnnotations(const Json& annotations, const std::string& field);

// A list of tolerations: operator Exists or Equal (empty: Equal), effect
// NoSchedule, PreferNoSchedule, NoExecute or empty, the key a qualified
// name (empty only with Exists), the value a label value (empty with
// Exists), tolerationSeconds an integer and only with effect NoExecute.
absl::Status ValidateTolerations(const Json& tolerations, const std::string& field);

// nodeAffinity (node selector terms with In, NotIn, Exists, DoesNotExist,
// Gt, Lt; matchFields on metadata.name), podAffinity and podAntiAffinity
// (label selectors with In, NotIn, Exists, DoesNotExist, namespaces,
// topologyKey); preferred terms weigh 1 to 100.
absl::Status ValidateAffinity(const Json& affinity, const std::string& field);

// {"requests": {...}, "limits": {...}} of a container, each value alone:
// standard (cpu, memory, ephemeral-storage, hugepages-<size>) or extended
// ("vendor.example/thing") resource names, non-negative quantities (strings
// or numbers), whole numbers for extended resources.
absl::Status ValidateResourceValues(const Json& resources, const std::string& field);

// The same and how requests and limits relate, for a container's resources
// as they will be: a request at most its limit; for extended resources and
// hugepages, which cannot be overcommitted, a limit, equal to the request.
absl::Status ValidateResourceRequirements(const Json& resources, const std::string& field);

// The parts of a whole pod template ({"metadata": ..., "spec": ...}) that
// the checks above cover: labels, annotations, schedulerName,
// priorityClassName, nodeSelector, tolerations, affinity and the resources
// of containers and init containers.
absl::Status ValidatePodTemplate(const Json& pod_template, const std::string& field);

}  // namespace wm::resolution

#endif  // WM_SERVER_RESOLUTION_POD_SPEC_VALIDATION_H_
