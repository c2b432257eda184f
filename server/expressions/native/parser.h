#ifndef WM_SERVER_EXPRESSIONS_NATIVE_PARSER_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_PARSER_H_

// A recursive-descent parser for gojq's jq grammar (parser.go.y of
// github.com/itchyny/gojq, read at b7ebffb, v0.12.19), producing the
// syntax tree of ast.h. The first increment of the native jq engine: it
// evaluates nothing and is wired into nothing yet.
//
// How gojq's LALR grammar maps to the descent, loosest first:
//
//   query    := 'def' f[(params)] ':' query ';' query     body: all the rest
//             | 'label' $x '|' query                       body: all the rest
//             | expr 'as' pattern ('?//' pattern)* '|' query
//             | query '|' query                            right-associative
//             | query ',' query                            left-associative
//             | expr
//   expr     := binary operators over terms, loosest first:
//               '//' right; '=' '|=' '+=' '-=' '*=' '/=' '%=' '//=' non-associative;
//               'or' left; 'and' left; '==' '!=' '<' '<=' '>' '>=' non-associative;
//               '+' '-' left; '*' '/' '%' left
//   term     := ('-' | '+') term | primary suffix*
//   suffix   := .name | [e] | [] | [e:e] | [e:] | [:e] | ? | .[...] | ."s"
//
// The forms with a body (def, label, as) take everything up to the closing
// token of the enclosing construct, so they end the comma or pipe chain
// they start in: `a, b as $x | c, d` is `a, (b as $x | (c, d))`.
//
// Where gojq differs from jq 1.6 (parser.y at jq-1.6; the descent follows
// gojq):
//  - `as` binds the whole expression on its left, not just the last term:
//    gojq's rule is `query as patterns | query`, and as `as` has higher
//    precedence than ',' and '|' but no binary operator rule can shift it,
//    the left side is the longest expr before it. So
//    `A and B and (C) as $s | body` is `(A and B and (C)) as $s | body`,
//    where jq 1.6 (`Term as Patterns | Exp`) reads
//    `A and B and ((C) as $s | body)`. Likewise `1 + 2 as $x | $x` is 3.
//  - `reduce`/`foreach` take an expr as source (`reduce .[] + 1 as $x ...`),
//    jq 1.6 a term.
//  - an object value is an expr (`{a: 1 + 2}`); jq 1.6 takes only terms,
//    `-`, and `|`.
//  - `if` without `else` is allowed (it means `else .`).
//  - keywords are object keys alone too (`{if}`, `{and}`), and `{$x: v}`
//    keys by $x's value; jq 1.6 has neither.
//  - `$ x` (a space after `$`) and keywords as function names
//    (`def true:`) are rejected; `$__loc__` is an ordinary variable (gojq
//    does not define it; jq 1.6 does).
//  - a postfix `?` protects only the last suffix step (see kOptional).
// Both bind `try` tightly: its body and handler are terms, so
// `1 + try 2 catch 3 + 4` is `(1 + (try 2 catch 3)) + 4`. Number literals
// are kept as text: gojq evaluates integer literals that do not fit an int
// as big integers, not doubles.
// Not accepted: the module system (`module`, `import`, `include`): gojq
// parses it but our expressions cannot load modules, so it is an error
// here rather than at compile time. A program that defines functions but
// has no query fails as in gojq ("missing query (try \".\")"), here rather
// than at compile time.
//
// Errors are InvalidArgument "line:column: what was expected, got what"
// (`1:7: expected "then" after if condition, got "else"`); columns count
// UTF-8 characters from 1.
//
// Bounds: the source length, and the nesting depth, which bounds both the
// parser's recursion and the depth of the tree it returns (so walking a
// parsed tree recursively, destroying it included, has bounded stack use).
// One level of nesting (a parenthesis, a bracket, an if) costs six frames
// of descent: measured at 2.0-2.4 KB of stack per level in a RelWithDebInfo
// build and 9-12 KB in a Debug ASan build, so the default 256 levels need
// at most ~0.6 MB (~3 MB under ASan). The deepest expression of our and
// upstream's catalogs nests 28 levels.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/expressions/native/ast.h"

namespace wm::expressions::native {

struct ParseLimits {
  // Longer sources fail with InvalidArgument before anything is read
  // (spans are 32-bit offsets, so the bound is at most 4 GiB - 1).
  size_t max_source_bytes = 64 << 10;
  // Deeper nesting (parentheses, brackets, operands chained left or right,
  // suffix chains) fails with InvalidArgument naming the bound.
  int max_depth = 256;
};

// Parses one jq program.
absl::StatusOr<NodePtr> Parse(absl::string_view source, const ParseLimits& limits = {});

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_PARSER_H_
