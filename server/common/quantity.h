#ifndef WM_SERVER_COMMON_QUANTITY_H_
#define WM_SERVER_COMMON_QUANTITY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm {

// A Kubernetes resource.Quantity ("500m", "16Gi", "1.5", "2e3") held exactly
// as thousandths of a unit, saturating at int64.
struct Quantity {
  int64_t milli = 0;

  // The value in whole units, rounded up (as Quantity.Value() does).
  int64_t Units() const;
};

absl::StatusOr<Quantity> ParseQuantity(absl::string_view text);

// Value to report for a resource: millicores for "cpu", whole units rounded
// up for everything else.
int64_t ReportedValue(absl::string_view resource, const Quantity& q);

// Renders a reported value as kubectl would show it: cpu "500m" or "20";
// byte-sized resources in binary units when exact ("16Gi"), else decimal
// ("70M"); counts as plain integers.
std::string FormatReported(absl::string_view resource, int64_t value);

// True for resources measured in bytes (memory, ephemeral-storage, hugepages-*).
bool IsByteResource(absl::string_view resource);

}  // namespace wm

#endif  // WM_SERVER_COMMON_QUANTITY_H_
