#ifndef WM_CLIENT_WMCTL_DEFINITIONS_VIEW_H_
#define WM_CLIENT_WMCTL_DEFINITIONS_VIEW_H_

#include <memory>
#include <string>
#include <vector>

#include "server/definitions/definition.h"

namespace wm::wmctl {

// kli's definitions table: NAME KIND ORIGIN COMPONENTS, the components
// listed root first, `component_limit` children after it ("+N more").
std::string DefinitionsTable(
    const std::vector<std::shared_ptr<const definitions::Definition>>& defs, int component_limit);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_DEFINITIONS_VIEW_H_
