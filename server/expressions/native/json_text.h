#ifndef WM_SERVER_EXPRESSIONS_NATIVE_JSON_TEXT_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_JSON_TEXT_H_

// JSON text exactly as gojq writes it (encoder.go, preview.go, error.go),
// because definitions observe it: `tostring`, `tojson`, string
// interpolation and `@json` turn values into text that a definition may
// compare or return, and error messages quote values in previews.
//
// gojq's encoding differs from nlohmann's dump(): object keys in sorted
// order (ours are sorted already); floats in the shortest form that reads
// back, in plain digits for 1e-6 <= |x| < 1e21 (1e20 is
// "100000000000000000000") and in exponent form otherwise with a
// single-digit negative exponent left unpadded ("1e-7", "1e+21"); NaN is
// null and infinities are +-1.7976931348623157e+308; strings as
// server/common/json_string.h writes them.

#include <string>

#include "absl/strings/string_view.h"
#include "server/common/json.h"

namespace wm::expressions::native {

// jq's type name: "null", "boolean", "number", "string", "array", "object".
const char* TypeName(const Json& value);

// Appends gojq's encoding of `value` (compact, no spaces).
void AppendJsonText(const Json& value, std::string& out);
std::string JsonText(const Json& value);

// gojq's Preview: the encoding cut to at most 30 bytes (at a UTF-8
// boundary), ending in ` ..."`, ` ...]`, ` ...}` or ` ...` when cut.
std::string Preview(const Json& value);

// gojq's typeErrorPreview: "null", or "TYPE (PREVIEW)" ("number (1)").
std::string TypePreview(const Json& value);

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_JSON_TEXT_H_
