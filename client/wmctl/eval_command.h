#ifndef WM_CLIENT_WMCTL_EVAL_COMMAND_H_
#define WM_CLIENT_WMCTL_EVAL_COMMAND_H_

#include <istream>
#include <ostream>

#include "client/wmctl/flags.h"

namespace wm::wmctl {

// `wmctl eval EXPR [-f FILE|-] [-r] [--engine NAME]`, for definition
// authors: evaluates one jq expression as the daemon evaluates a
// definition's, and prints every output as one compact JSON line (with -r,
// strings raw), or the error.
//  - EXPR first gets the checks the daemon's validation gives every
//    definition expression (definitions::ExpressionProblems: at most 16
//    KiB, the read-only blacklist, the blocked builtins), with the same
//    messages; then it is compiled as the daemon compiles it ("jq does not
//    compile: ...").
//  - It runs on the engine `--engine` names (MakeEngine; native by
//    default, as the daemon's --jq-engine) with the daemon's EvalLimits:
//    999 outputs, 4 MiB of outputs, a 2 s budget, and the engine's memory
//    bound (natively 64 MiB of values built and 1 MiB of stack; a libjq
//    worker's 256 MiB). As in the daemon, an evaluation yields all its
//    outputs or its first error, never part of them.
//  - The input: the document of FILE (stdin with -f -), JSON or YAML
//    (ReadDocuments); each document of a multi-document YAML in turn, an
//    error then naming it (FILE#N). Without -f: null.
// `args` are the command's (already checked against its flags). Returns
// kli's exit code: 0 ok; 1 EXPR refused, not compiling or failing (a jq
// error or a bound), or an engine that is not available; 2 usage or an
// unreadable input.
int RunEval(const ParsedArgs& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_EVAL_COMMAND_H_
