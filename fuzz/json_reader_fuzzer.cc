// Feeds arbitrary bytes to ParseJson (server/common/json_reader.h), whose
// texts up to 64 KiB go through simdjson first, and to nlohmann's parser
// alone: both must accept the same texts, build the same tree with the same
// number types, and ParseJson must refuse what nests deeper than its bound.
// Aborts on any difference.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "server/common/json_reader.h"
#include "server/common/testing/typed_text.h"

namespace {

size_t Depth(const wm::Json& value) {
  size_t deepest = 0;
  if (value.is_structured()) {
    for (const wm::Json& member : value) deepest = std::max(deepest, Depth(member));
    return deepest + 1;
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto parsed = wm::ParseJson(text);
  // nlohmann's own parser has no depth bound; libFuzzer's inputs are small
  // enough (4 KiB by default) for its tree to be walked recursively.
  wm::Json reference = wm::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (reference.is_discarded()) {
    if (parsed.ok()) std::abort();  // accepted what nlohmann refuses
    return 0;
  }
  if (Depth(reference) > wm::kMaxJsonDepth) {
    if (parsed.ok()) std::abort();  // past the bound
    return 0;
  }
  // Accepted by nlohmann (which refuses numbers past a double's range, as
  // ParseJson does) and within the bound: ParseJson must build the same.
  if (!parsed.ok() || wm::testing::TypedText(*parsed) != wm::testing::TypedText(reference)) {
    std::abort();
  }
  return 0;
}
