// Feeds arbitrary bytes to the native jq parser (server/expressions/native).
// It must never crash, whatever the nesting or the bytes; when a source
// parses, its canonical text must parse back to the same tree.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "server/expressions/native/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace native = wm::expressions::native;
  std::string source(reinterpret_cast<const char*>(data), size);
  auto tree = native::Parse(source);
  if (!tree.ok()) return 0;
  std::string printed = native::ToString(**tree);
  // Printing adds parentheses, hence parser levels, never tree depth.
  native::ParseLimits roomy;
  roomy.max_depth = 4 * native::ParseLimits().max_depth;
  roomy.max_source_bytes = 16 * (size + 64);
  auto reparsed = native::Parse(printed, roomy);
  if (!reparsed.ok() || !native::SameTree(**tree, **reparsed)) std::abort();
  return 0;
}
