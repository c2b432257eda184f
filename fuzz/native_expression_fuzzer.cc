// Feeds arbitrary jq source to the native engine, compiled and evaluated
// in this process on a small document with tight bounds. Nothing a source
// does may crash the process, throw, or run past its bounds; errors are
// fine. Unlike expression_fuzzer, nothing is filtered first: the native
// engine must be safe even for what validation refuses.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/time/clock.h"
#include "server/expressions/native_engine.h"

namespace {

wm::expressions::Engine& Engine() {
  static wm::expressions::Engine* engine = [] {
    wm::expressions::NativeEngineOptions options;
    options.limits.budget = absl::Milliseconds(100);
    options.max_built_bytes = 16 << 20;
    return wm::expressions::NewNativeEngine(options).value().release();
  }();
  return *engine;
}

const wm::Json& Document() {
  static const wm::Json* doc = new wm::Json(wm::Json::parse(R"({
    "spec": {"replicas": 3, "roles": [{"name": "a", "replicas": 2}, {"name": "b"}],
             "labels": {"x": "1"}, "ratio": 0.5, "big": 9007199254740993},
    "status": {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Running",
               "message": "é☃"}})"));
  return *doc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::string source(reinterpret_cast<const char*>(data), size);
  auto program = Engine().Compile({source});
  if (!program.ok()) return 0;
  absl::Time start = absl::Now();
  (void)Engine().Run([&](wm::expressions::Session& session) {
    auto outputs = session.Evaluate(**program, 0, session.Load(Document()));
    // A defect caught at the engine's boundary is still a defect.
    if (!outputs.ok() && outputs.status().code() == absl::StatusCode::kInternal) {
      std::fprintf(stderr, "native_expression_fuzzer: %s\n",
                   std::string(outputs.status().message()).c_str());
      std::abort();
    }
    return absl::OkStatus();
  });
  // The budget is checked every 1024 steps: an evaluation may overrun it
  // by a few steps, never by seconds.
  if (absl::Now() - start > absl::Seconds(5)) {
    std::fprintf(stderr, "native_expression_fuzzer: ran past its budget\n");
    std::abort();
  }
  return 0;
}
