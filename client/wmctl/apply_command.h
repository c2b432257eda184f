#ifndef WM_CLIENT_WMCTL_APPLY_COMMAND_H_
#define WM_CLIENT_WMCTL_APPLY_COMMAND_H_

#include <ostream>

#include "server/kube/api_client.h"

namespace wm::wmctl {

// `wmctl definitions apply [--prune]`: server-side applies the built-in
// catalog as Karta objects over the kubeconfig's context, as the user
// (controllers::PublishKartas: our field manager and catalog label; a
// field someone else changed is kept and said so; --prune deletes catalog
// Kartas no longer shipped). One line per Karta on `out`, kubectl's way
// ("karta.run.ai/NAME created"); kept ones and failures also on `err`.
// Exit code 0, or 1 when any Karta failed or the catalog could not be read.
int RunDefinitionsApply(const kube::ApiClient& client, bool prune, std::ostream& out,
                        std::ostream& err);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_APPLY_COMMAND_H_
