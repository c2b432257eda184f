#include "client/wmctl/apply_command.h"

#include "catalog/catalog.h"
#include "server/controllers/catalog_publisher.h"

namespace wm::wmctl {

int RunDefinitionsApply(const kube::ApiClient& client, bool prune, std::ostream& out,
                        std::ostream& err) {
  controllers::PublishOptions options;
  options.prune = prune;
  auto results = controllers::PublishKartas(client, BuiltinCatalog(), options);
  if (!results.ok()) {
    err << "error: " << results.status().message() << "\n";
    return 1;
  }
  int code = 0;
  for (const controllers::PublishedKarta& karta : *results) {
    using Outcome = controllers::PublishedKarta::Outcome;
    out << "karta.run.ai/" << karta.name << " " << controllers::OutcomeName(karta.outcome) << "\n";
    if (karta.outcome == Outcome::kKept) {
      err << "warning: karta.run.ai/" << karta.name << " kept as it is: " << karta.detail << "\n";
    } else if (karta.outcome == Outcome::kFailed) {
      err << "error: karta.run.ai/" << karta.name << ": " << karta.detail << "\n";
      code = 1;
    }
  }
  return code;
}

}  // namespace wm::wmctl
