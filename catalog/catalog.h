#ifndef WM_CATALOG_CATALOG_H_
#define WM_CATALOG_CATALOG_H_

#include <string>
#include <utility>
#include <vector>

namespace wm {

// The built-in definitions as (file name, YAML text), sorted by file name.
const std::vector<std::pair<std::string, std::string>>& BuiltinCatalog();

}  // namespace wm

#endif  // WM_CATALOG_CATALOG_H_
