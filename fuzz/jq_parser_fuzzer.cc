// Feeds arbitrary bytes to the native jq parser (server/expressions/native).
// It must never crash, whatever the nesting or the bytes; when a source
// parses, its canonical text must parse back to the same tree.

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "server/expressions/native/parser.h"

namespace {

namespace native = wm::expressions::native;

struct Reparse {
  const native::Node* tree;
  size_t source_size;
};

void* CheckRoundTrip(void* argument) {
  const Reparse& r = *static_cast<const Reparse*>(argument);
  std::string printed = native::ToString(*r.tree);
  // Printing adds parentheses, hence parser levels, never tree depth.
  native::ParseLimits roomy;
  roomy.max_depth = 4 * native::ParseLimits().max_depth;
  roomy.max_source_bytes = 16 * (r.source_size + 64);
  auto reparsed = native::Parse(printed, roomy);
  if (!reparsed.ok() || !native::SameTree(*r.tree, **reparsed)) std::abort();
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string source(reinterpret_cast<const char*>(data), size);
  // The parse under test: default limits, on the fuzzer's own stack.
  auto tree = native::Parse(source);
  if (!tree.ok()) return 0;
  Reparse reparse{tree->get(), size};
  // The check's reparse may nest four times deeper than the default bound,
  // which under AddressSanitizer takes up to about 8 MB of stack
  // (ParserTest.SourcesAtTheDepthBoundFitInABoundedStack): deep trees are
  // checked on a thread of their own with room to spare.
  if ((*tree)->depth() < 64) {
    CheckRoundTrip(&reparse);
    return 0;
  }
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, size_t{64} << 20);
  pthread_t thread;
  if (pthread_create(&thread, &attributes, CheckRoundTrip, &reparse) != 0) std::abort();
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
  return 0;
}
