// Feeds arbitrary bytes to definition loading: YAML parsing, the schema
// check, conversion and semantic validation (no compiling: that is the
// expression fuzzer's ground). Must never crash, hang or leak.

#include <cstddef>
#include <cstdint>
#include <string>

#include "server/common/yaml_json.h"
#include "server/definitions/parse.h"
#include "server/definitions/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto docs = wm::ParseYamlDocuments(text);
  if (!docs.ok()) return 0;
  for (wm::Json& doc : *docs) {
    auto parsed =
        wm::definitions::ParseDefinition(std::move(doc), wm::definitions::Origin::kFile, "fuzz");
    if (parsed.definition) wm::definitions::Validate(*parsed.definition);
  }
  return 0;
}
