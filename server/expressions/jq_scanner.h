#ifndef WM_SERVER_EXPRESSIONS_JQ_SCANNER_H_
#define WM_SERVER_EXPRESSIONS_JQ_SCANNER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace wm::expressions {

// A lexical token of jq source. String literals are one token each; the
// expressions interpolated into them (`"\(...)"`) are tokenized in place, so
// every check below also sees inside interpolations.
struct JqToken {
  enum class Kind {
    kIdentifier,  // foo, foo::bar, keywords (if, def, reduce, ...)
    kField,       // .foo
    kVariable,    // $foo
    kFormat,      // @base64
    kString,      // "..." (one token for the whole literal)
    kNumber,
    kOperator,  // | , // = |= == ( ) [ ] { } : ; . .. ? ?// and the rest
  };
  Kind kind;
  std::string text;
  size_t offset;  // byte offset in the scanned source
};

// Tokenizes jq source. Fails on an unterminated string or a character jq
// does not know.
absl::StatusOr<std::vector<JqToken>> ScanJq(absl::string_view source);

// Findings for constructs a definition expression must not use. Two kinds:
//  - upstream's read-only blacklist: assignment operators, del, range,
//    paths, recurse, walk, repeat and recursive descent (..), also inside
//    def bodies;
//  - ours, because definitions may come from the cluster and their outputs
//    flow back to callers: env, $ENV, input, inputs, input_filename,
//    input_line_number, $__loc__, debug, stderr, halt, halt_error,
//    get_search_list, get_prog_origin, get_jq_origin, and import/include
//    (the module system reads files).
// Object keys (`{range: 1}`) and fields (`.range`) are names, not calls, and
// pass. Returns one message per finding, in source order.
std::vector<std::string> FindForbiddenConstructs(absl::string_view source);

// gojq accepts `if c then x end` (an `if` without `else`, meaning
// `else . end`); jq 1.6 does not. Returns the source with `else .` inserted
// before every `end` whose `if` has no `else`. Sources that do not scan are
// returned unchanged (the compiler reports them).
std::string RewriteElselessIf(absl::string_view source);

}  // namespace wm::expressions

#endif  // WM_SERVER_EXPRESSIONS_JQ_SCANNER_H_
