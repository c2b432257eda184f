#include "server/common/testing/source_dir.h"

namespace wm::testing {

const char* SourceDir() { return WM_SOURCE_DIR_PATH; }

}  // namespace wm::testing
