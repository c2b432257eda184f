// Feeds arbitrary jq source to the expression layer: the scanner and
// blacklist, the else-less-if rewrite, then compiling and evaluating it in
// the worker under a short budget. The daemon side must never crash or hang
// whatever the source does; errors are fine.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "server/expressions/jq_engine.h"
#include "server/expressions/jq_scanner.h"

namespace {

wm::expressions::Engine& Engine() {
  static wm::expressions::Engine* engine = [] {
    wm::expressions::JqEngineOptions options;
    options.workers = 1;
    options.limits.budget = absl::Milliseconds(200);
    options.memory_limit_bytes = int64_t{512} << 20;
    return wm::expressions::NewJqEngine(options).value().release();
  }();
  return *engine;
}

const wm::Json& Document() {
  static const wm::Json* doc = new wm::Json(wm::Json::parse(R"({
    "spec": {"replicas": 3, "roles": [{"name": "a", "replicas": 2}, {"name": "b"}],
             "labels": {"x": "1"}},
    "status": {"conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}})"));
  return *doc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::string source(reinterpret_cast<const char*>(data), size);
  if (source.find('\0') != std::string::npos) return 0;
  // Definitions only ever evaluate sources that pass the blacklist.
  if (!wm::expressions::FindForbiddenConstructs(source).empty()) return 0;
  wm::expressions::RewriteElselessIf(source);
  auto program = Engine().Compile({source});
  if (!program.ok()) return 0;
  (void)Engine().Run([&](wm::expressions::Session& session) {
    (void)session.Evaluate(**program, 0, session.Load(Document()));
    return absl::OkStatus();
  });
  return 0;
}
