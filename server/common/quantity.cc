#include "server/common/quantity.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/common/user_text.h"

namespace wm {
namespace {

using int128 = __int128;
constexpr int128 kMax = std::numeric_limits<int64_t>::max();

// base^exp for results within int128 (10^38 at most).
int128 Pow(int128 base, int exp) {
  int128 r = 1;
  for (int i = 0; i < exp; ++i) r *= base;
  return r;
}

// Ceil-divides allowing negative numerators.
int128 CeilDiv(int128 num, int128 den) {
  int128 q = num / den;
  if (num % den != 0 && num > 0) ++q;
  return q;
}

}  // namespace

// In int64: milli / 1000 cannot overflow, and int128 division is a library
// call made for every reported amount.
int64_t Quantity::Units() const {
  int64_t units = milli / 1000;
  return milli % 1000 != 0 && milli > 0 ? units + 1 : units;
}

absl::StatusOr<Quantity> ParseQuantity(absl::string_view text) {
  // Most requests are small whole numbers ("1", "4" GPUs): up to 15 digits
  // their thousandths fit int64 (10^18 < 9.2e18) and need none of the
  // general path's 128-bit arithmetic.
  if (!text.empty() && text.size() <= 15 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int64_t units = 0;
    for (char c : text) units = units * 10 + (c - '0');
    return Quantity{units * 1000};
  }
  auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat("invalid quantity ", QuoteUserText(text)));
  };
  auto out_of_range = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("quantity \"", text, "\" is out of range (at most ",
                     std::numeric_limits<int64_t>::max(), "m, about 9.2e15 units)"));
  };
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  int128 mantissa = 0;
  int fraction_digits = 0;
  bool any_digit = false, in_fraction = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      // Digits past int128's comfort are dropped (they cannot matter at
      // milli precision for any real quantity).
      if (mantissa < Pow(10, 30)) {
        mantissa = mantissa * 10 + (c - '0');
        if (in_fraction) ++fraction_digits;
      } else if (!in_fraction) {
        return out_of_range();
      }
    } else if (c == '.' && !in_fraction) {
      in_fraction = true;
    } else {
      break;
    }
  }
  if (!any_digit) return invalid();
  absl::string_view suffix = text.substr(i);
  // value = mantissa * 10^-fraction_digits * base^exp
  int128 binary_multiplier = 1;
  int decimal_exponent = 0;
  if (suffix.empty()) {
  } else if (suffix == "Ki") {
    binary_multiplier = int128(1) << 10;
  } else if (suffix == "Mi") {
    binary_multiplier = int128(1) << 20;
  } else if (suffix == "Gi") {
    binary_multiplier = int128(1) << 30;
  } else if (suffix == "Ti") {
    binary_multiplier = int128(1) << 40;
  } else if (suffix == "Pi") {
    binary_multiplier = int128(1) << 50;
  } else if (suffix == "Ei") {
    binary_multiplier = int128(1) << 60;
  } else if (suffix == "n") {
    decimal_exponent = -9;
  } else if (suffix == "u") {
    decimal_exponent = -6;
  } else if (suffix == "m") {
    decimal_exponent = -3;
  } else if (suffix == "k") {
    decimal_exponent = 3;
  } else if (suffix == "M") {
    decimal_exponent = 6;
  } else if (suffix == "G") {
    decimal_exponent = 9;
  } else if (suffix == "T") {
    decimal_exponent = 12;
  } else if (suffix == "P") {
    decimal_exponent = 15;
  } else if (suffix == "E") {
    decimal_exponent = 18;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    absl::string_view exp = suffix.substr(1);
    bool exp_negative = false;
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      exp_negative = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 3) return invalid();
    int e = 0;
    for (char c : exp) {
      if (c < '0' || c > '9') return invalid();
      e = e * 10 + (c - '0');
    }
    decimal_exponent = exp_negative ? -e : e;
  } else {
    return invalid();
  }
  // milli = mantissa * binary * 10^(decimal_exponent + 3 - fraction_digits)
  int128 value;
  if (__builtin_mul_overflow(mantissa, binary_multiplier, &value)) return out_of_range();
  int scale = decimal_exponent + 3 - fraction_digits;
  if (scale >= 0) {
    // 10^19 thousandths already pass int64.
    if (value != 0 && (scale > 18 || __builtin_mul_overflow(value, Pow(10, scale), &value))) {
      return out_of_range();
    }
  } else {
    value = -scale > 38 ? (value == 0 ? 0 : 1) : CeilDiv(value, Pow(10, -scale));
  }
  if (value > kMax) return out_of_range();
  Quantity q;
  q.milli = static_cast<int64_t>(negative ? -value : value);
  return q;
}

bool IsByteResource(absl::string_view resource) {
  return resource == "memory" || resource == "ephemeral-storage" ||
         absl::StartsWith(resource, "hugepages-") || resource == "storage";
}

int64_t ReportedValue(absl::string_view resource, const Quantity& q) {
  return resource == "cpu" ? q.milli : q.Units();
}

std::string FormatReported(absl::string_view resource, int64_t value) {
  if (resource == "cpu") {
    if (value % 1000 == 0) return absl::StrCat(value / 1000);
    return absl::StrCat(value, "m");
  }
  if (!IsByteResource(resource) || value == 0) return absl::StrCat(value);
  static constexpr const char* kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static constexpr const char* kDecimal[] = {"k", "M", "G", "T", "P", "E"};
  for (int i = 5; i >= 0; --i) {
    int64_t unit = int64_t{1} << (10 * (i + 1));
    if (value % unit == 0) return absl::StrCat(value / unit, kBinary[i]);
  }
  int64_t unit = 1;
  for (int i = 0; i < 6; ++i) unit *= 1000;
  for (int i = 5; i >= 0; --i, unit /= 1000) {
    if (value % unit == 0) return absl::StrCat(value / unit, kDecimal[i]);
  }
  return absl::StrCat(value);
}

}  // namespace wm
