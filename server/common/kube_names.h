#ifndef WM_SERVER_COMMON_KUBE_NAMES_H_
#define WM_SERVER_COMMON_KUBE_NAMES_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace wm {

// The syntax Kubernetes gives names, keys and values
// (k8s.io/apimachinery/pkg/util/validation). Each check returns "" when the
// text is valid and otherwise what is wrong with it, for an error message
// that names the field before it; the text itself is never echoed.

inline constexpr size_t kMaxQualifiedNameLength = 63;      // the name part
inline constexpr size_t kMaxDns1123SubdomainLength = 253;  // also a key's prefix
inline constexpr size_t kMaxDns1123LabelLength = 63;
inline constexpr size_t kMaxLabelValueLength = 63;

// A qualified name: label, annotation, taint and topology keys, resource
// names. An optional DNS subdomain prefix (at most 253 characters) and "/",
// then a name of 1 to 63 characters matching
// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?.
std::string QualifiedNameProblem(absl::string_view text);

// A label value: empty, or at most 63 characters of the name syntax above.
std::string LabelValueProblem(absl::string_view text);

// A DNS (RFC 1123) subdomain: scheduler, priority class and node names. At
// most 253 characters; lowercase alphanumerics, '-' and '.', beginning and
// ending with an alphanumeric.
std::string Dns1123SubdomainProblem(absl::string_view text);

// A DNS (RFC 1123) label: namespace names. At most 63 characters;
// lowercase alphanumerics and '-', beginning and ending with an
// alphanumeric.
std::string Dns1123LabelProblem(absl::string_view text);

}  // namespace wm

#endif  // WM_SERVER_COMMON_KUBE_NAMES_H_
