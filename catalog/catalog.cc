#include "catalog/catalog.h"

namespace wm {

const std::vector<std::pair<std::string, std::string>>& EmbeddedCatalog();

const std::vector<std::pair<std::string, std::string>>& BuiltinCatalog() {
  return EmbeddedCatalog();
}

}  // namespace wm
