#ifndef WM_SERVER_EXPRESSIONS_NATIVE_OPERATORS_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_OPERATORS_H_

// jq's value operators with gojq's semantics and error texts
// (operator.go, compare.go): ordering, equality, arithmetic, indexing.
//
// Numbers: gojq computes on Go ints and float64 and turns an int overflow
// into a big integer. Upstream converts every input to float64 first, so
// for upstream's inputs the overflow case is float arithmetic; we hold
// int64 and double and fall back to double on overflow, which matches
// upstream for its inputs and differs only for big integer literals
// (docs/divergences.md). A double result that is integral and fits int64
// is stored as an integer (JSON has one number type; gojq prints 3.0 as
// "3" too), except -0, which gojq prints as "-0".

#include <string>

#include "absl/status/statusor.h"
#include "server/common/json.h"

namespace wm::expressions::native {

// -1, 0 or 1: jq's total order (null < false < true < numbers < strings <
// arrays < objects; arrays by element then length; objects by sorted key
// list, then values in key order; NaN below every number).
int Compare(const Json& a, const Json& b);
inline bool Equal(const Json& a, const Json& b) { return Compare(a, b) == 0; }

// Scalars read in place. nlohmann's get<T>() converts through an
// out-of-line from_json that tests the type again (and could throw); an
// evaluation reads a boolean or a number at most of its steps, after a
// type test of its own. REQUIRES: v is of the type read.
inline bool BoolOf(const Json& v) { return *v.get_ptr<const Json::boolean_t*>(); }
inline int64_t SignedOf(const Json& v) { return *v.get_ptr<const Json::number_integer_t*>(); }
inline uint64_t UnsignedOf(const Json& v) { return *v.get_ptr<const Json::number_unsigned_t*>(); }
inline double DoubleOf(const Json& v) { return *v.get_ptr<const Json::number_float_t*>(); }

// jq truthiness: everything but null and false.
inline bool Truthy(const Json& v) { return !(v.is_null() || (v.is_boolean() && !BoolOf(v))); }

// A number as Json, integral doubles as integers (see above).
Json MakeNumber(double value);
// The number as a double. REQUIRES: value.is_number().
double ToDouble(const Json& value);
// gojq's toInt: doubles truncate toward zero and saturate.
int64_t ToInt(const Json& value);

// Binary operators; errors are gojq's messages ("cannot add: number (1)
// and string ("a")"), gojq's bounds included (`string * n` fails from 2^31
// bytes). The evaluator's memory bound is the caller's: see
// RepeatedStringBytes.
absl::StatusOr<Json> Add(const Json& l, const Json& r);
absl::StatusOr<Json> Subtract(const Json& l, const Json& r);
absl::StatusOr<Json> Multiply(const Json& l, const Json& r);
// The bytes `l * r` would build when it repeats a string, else 0 (also
// for a repeat gojq refuses itself, Multiply's error): what the evaluator
// checks against its memory bound before multiplying.
size_t RepeatedStringBytes(const Json& l, const Json& r);
absl::StatusOr<Json> Divide(const Json& l, const Json& r);
absl::StatusOr<Json> Modulo(const Json& l, const Json& r);
absl::StatusOr<Json> Negate(const Json& v);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_OPERATORS_H_
