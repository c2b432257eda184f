#ifndef WM_SERVER_COMMON_QUANTITY_H_
#define WM_SERVER_COMMON_QUANTITY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm {

// A Kubernetes resource.Quantity ("500m", "16Gi", "1.5", "2e3") held exactly
// as thousandths of a unit (finer values round up, away from zero).
struct Quantity {
  int64_t milli = 0;

  // The value in whole units, rounded up (as Quantity.Value() does).
  int64_t Units() const;
};

// Fails on text that is no quantity, and on one whose thousandths pass int64
// (|q| > 9223372036854775807m, about 9.2e15 units or 8Pi): Kubernetes takes
// larger decimal quantities but its MilliValue() overflows on them, and the
// scheduler sums cpu in thousandths, so no larger request can be honoured.
// "quantity \"1e400\" is out of range (at most 9223372036854775807m, ...)".
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
