// The native engine against gojq, upstream's engine, on arbitrary jq
// source: each input is an expression, evaluated natively and by gojq
// (tools/gojq-oracle, named by WM_GOJQ_ORACLE) on a few fixed documents.
// Where both evaluate, they must agree: the same outputs, or both failing
// (error texts may differ, docs/divergences.md rule 1). A disagreement
// aborts with both answers.
//
// Compared: what a definition may contain. Not compared: what validation
// refuses before any engine sees it (assignment operators, `del`, `paths`,
// `range`, `..` and the rest of upstream's read-only list, and ours:
// jq_scanner.h), sources that are not valid UTF-8 (the daemon refuses
// them, and the oracle's JSON requests could not carry them); and, as
// docs/divergences.md says why, sources the native engine does not compile
// (unimplemented functions, rule 5; refused regex flags, rule 4);
// evaluations that reach one of its bounds (gojq's differ: 10 s, no memory
// bound); integers beyond 2^53 in the source or an output (rule 2:
// upstream's float64 inputs and gojq's big integers); and number literals
// or string literals with a suffix (`+1 .a`, `-1?.a`, `.["a".k]`; rule 3:
// a gojq defect); and `path(...)`
// and evaluations where either engine refuses a path (rule 1: gojq's path
// mode also lets a `try` inside it swallow the errors of what consumes its
// output, `path(.a? * .b)` is empty there).
//
// The native bounds here are tight (100 ms, 16 KiB of values built): some
// of gojq's builtins are quadratic where ours are linear (`indices` of a
// long string), and only what stays small reaches gojq, which then has 2 s
// by its own clock and 3 s by ours.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/common/json.h"
#include "server/expressions/jq_scanner.h"
#include "server/expressions/native_engine.h"
#include "server/expressions/testing/gojq_oracle.h"

namespace {

using wm::Json;
namespace expressions = wm::expressions;

expressions::Engine& Engine() {
  static expressions::Engine* engine = [] {
    expressions::NativeEngineOptions options;
    options.limits.budget = absl::Milliseconds(100);
    options.max_built_bytes = 16 << 10;
    return expressions::NewNativeEngine(options).value().release();
  }();
  return *engine;
}

// The oracle, started on first use and again after a call that ran out of
// time (which kills it).
std::unique_ptr<expressions::testing::GojqOracle>& Oracle() {
  static auto* oracle = new std::unique_ptr<expressions::testing::GojqOracle>();
  if (*oracle != nullptr) return *oracle;
  auto path = expressions::testing::GojqOraclePathFromEnv();
  if (!path) {
    std::fprintf(stderr, "native_differential_fuzzer: set %s=$(scripts/build-gojq-oracle)\n",
                 expressions::testing::kGojqOracleEnv);
    std::exit(2);
  }
  auto started = expressions::testing::GojqOracle::Start(*path, {"-timeout=2s"});
  if (!started.ok()) {
    std::fprintf(stderr, "native_differential_fuzzer: %s\n",
                 std::string(started.status().message()).c_str());
    std::exit(2);
  }
  *oracle = *std::move(started);
  return *oracle;
}

// A workload-like object, values at the edges (null, "", 0, unicode), and
// a mixed array.
const std::vector<Json>& Documents() {
  static const std::vector<Json>* documents = new std::vector<Json>{
      Json::parse(R"({
        "spec": {"replicas": 3, "roles": [{"name": "a", "replicas": 2}, {"name": "b"}],
                 "labels": {"x": "1", "y/z": ""}, "ratio": 0.5, "suspend": false},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Running",
                   "message": "é☃"}})"),
      Json::parse(R"({"a": null, "b": "", "c": 0, "d": [], "e": {}, "f": -1.5, "g": "ß"})"),
      Json::parse(R"([1, "1", null, true, [2, {"k": "v"}], {"a": 1}, -0.25, "x y"])"),
  };
  return *documents;
}

// Whether `value` holds an integer gojq and we may read differently.
bool HasLargeNumber(const Json& value) {
  if (value.is_number()) return std::fabs(value.get<double>()) > 9007199254740992.0;
  if (!value.is_structured()) return false;
  for (const Json& member : value) {
    if (HasLargeNumber(member)) return true;
  }
  return false;
}

// Whether the source writes a number with more than 15 digits.
bool HasLongNumberLiteral(const std::string& source) {
  int run = 0;
  for (char c : source) {
    run = c >= '0' && c <= '9' ? run + 1 : 0;
    if (run > 15) return true;
  }
  return false;
}

// Whether `text` is valid UTF-8: the oracle's requests are JSON, which
// would replace invalid bytes, so gojq would see another source. The daemon
// refuses such definitions before any engine sees them.
bool ValidUtf8(const std::string& text) {
  std::string encoded = Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
  Json decoded = Json::parse(encoded, nullptr, false);
  return decoded.is_string() && decoded.get_ref<const std::string&>() == text;
}

// Whether a number literal takes a suffix (`1 .a`, `1[0]`): gojq drops the
// suffix under a unary sign (`+1 .a` is 1, docs/divergences.md rule 3).
bool HasNumberWithSuffix(const std::string& source) {
  auto digit = [&](size_t k) { return k < source.size() && source[k] >= '0' && source[k] <= '9'; };
  auto name_start = [&](size_t k) {
    if (k >= source.size()) return false;
    char c = source[k];
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '"' || c == '[';
  };
  for (size_t i = 0; i < source.size(); ++i) {
    if (!digit(i)) continue;
    // A literal: digits, an optional fraction ("1." too), an optional
    // exponent.
    size_t j = i;
    while (digit(j)) ++j;
    if (j < source.size() && source[j] == '.' && !name_start(j + 1)) {
      ++j;
      while (digit(j)) ++j;
    }
    if (j < source.size() && (source[j] == 'e' || source[j] == 'E')) {
      ++j;
      if (j < source.size() && (source[j] == '+' || source[j] == '-')) ++j;
      while (digit(j)) ++j;
    }
    // Blanks and comments, as jq's lexer skips them.
    while (j < source.size()) {
      char c = source[j];
      if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
        ++j;
      } else if (c == '#') {
        while (j < source.size() && source[j] != '\n') ++j;
      } else {
        break;
      }
    }
    if (j < source.size() && (source[j] == '[' || source[j] == '?')) return true;
    if (j < source.size() && source[j] == '.' && name_start(j + 1)) return true;
    i = j;
  }
  return false;
}

// Whether a string literal takes a suffix (`"a".k`, `"a"[0]`): gojq drops
// it where the literal is an index key (`.["a".k]` is `.["a"]`, rule 3).
// Approximate (interpolations are not parsed): it may skip more than it
// must, never less.
bool HasStringWithSuffix(const std::string& source) {
  bool in_string = false;
  for (size_t i = 0; i < source.size(); ++i) {
    char c = source[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
        size_t j = i + 1;
        while (j < source.size() &&
               (source[j] == ' ' || source[j] == '\n' || source[j] == '\t' || source[j] == '\r')) {
          ++j;
        }
        if (j < source.size() && (source[j] == '.' || source[j] == '[' || source[j] == '?')) {
          return true;
        }
      }
    } else if (c == '"') {
      in_string = true;
    }
  }
  return false;
}

std::string Describe(const absl::StatusOr<std::vector<Json>>& native) {
  return native.ok() ? Json(*native).dump() : "error: " + std::string(native.status().message());
}

std::string Describe(const expressions::testing::GojqResult& gojq) {
  return gojq.ok() ? Json(gojq.outputs).dump() : gojq.error_stage + " error: " + gojq.error;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1024) return 0;
  std::string source(reinterpret_cast<const char*>(data), size);
  if (HasLongNumberLiteral(source) || HasNumberWithSuffix(source) || HasStringWithSuffix(source) ||
      !ValidUtf8(source) || absl::StrContains(source, "path(") ||
      !expressions::FindForbiddenConstructs(source).empty()) {
    return 0;
  }
  auto program = Engine().Compile({source});
  if (!program.ok()) return 0;
  for (const Json& document : Documents()) {
    absl::StatusOr<std::vector<Json>> native;
    (void)Engine().Run([&](expressions::Session& session) {
      native = session.Evaluate(**program, 0, session.Load(document));
      return absl::OkStatus();
    });
    if (!native.ok() && native.status().code() == absl::StatusCode::kInternal) {
      std::fprintf(stderr, "native_differential_fuzzer: engine defect: %s\n",
                   std::string(native.status().message()).c_str());
      std::abort();
    }
    // A bound of ours (time, memory, stack) is not gojq's.
    if (!native.ok() && native.status().code() != absl::StatusCode::kInvalidArgument) continue;
    if (native.ok() && HasLargeNumber(Json(*native))) continue;
    auto gojq = Oracle()->Evaluate(source, document, absl::Seconds(3));
    if (absl::IsDeadlineExceeded(gojq.status())) {
      Oracle().reset();  // gojq stuck inside one step: a bound of gojq's
      continue;
    }
    if (!gojq.ok()) {
      std::fprintf(stderr, "native_differential_fuzzer: the oracle failed: %s\n",
                   std::string(gojq.status().message()).c_str());
      std::abort();
    }
    if (gojq->ok() && HasLargeNumber(Json(gojq->outputs))) continue;
    // gojq out of time (its -timeout): a bound of gojq's.
    if (!gojq->ok() && gojq->error.find("context deadline exceeded") != std::string::npos) {
      continue;
    }
    // Rule 1: gojq checks a path against the last value its path stack
    // tracked, which may be a sibling's; where a computed value happens to
    // equal it, gojq accepts a path we refuse, and the other way round.
    auto invalid_path = [](absl::string_view error) {
      return absl::StartsWith(error, "invalid path");
    };
    if ((!native.ok() && invalid_path(native.status().message())) ||
        (!gojq->ok() && invalid_path(gojq->error))) {
      continue;
    }
    bool same = native.ok() && gojq->ok() ? *native == gojq->outputs : !native.ok() && !gojq->ok();
    if (!same) {
      std::fprintf(stderr,
                   "native_differential_fuzzer: the native engine and gojq disagree\n"
                   "  expression: %s\n  on:     %s\n  native: %s\n  gojq:   %s\n",
                   source.c_str(), document.dump().c_str(), Describe(native).c_str(),
                   Describe(*gojq).c_str());
      std::abort();
    }
  }
  return 0;
}
