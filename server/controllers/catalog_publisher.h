#ifndef WM_SERVER_CONTROLLERS_CATALOG_PUBLISHER_H_
#define WM_SERVER_CONTROLLERS_CATALOG_PUBLISHER_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "server/common/json.h"
#include "server/kube/api_client.h"

namespace wm::controllers {

// The label on every Karta that comes from our catalog: what --prune
// selects, and how a user tells ours from theirs.
inline constexpr char kCatalogLabel[] = "workloadmap.run.ai/catalog";
// The field manager of our applies (metadata.managedFields names it).
inline constexpr char kCatalogFieldManager[] = "workloadmap-catalog";

struct PublishOptions {
  std::string field_manager = kCatalogFieldManager;
  // Also delete catalog Kartas (by kCatalogLabel) that `documents` no
  // longer has, unless someone else changed their spec.
  bool prune = false;
  // Asked before each write; a false answer stops the run (a leader that
  // lost its Lease). Null: always.
  std::function<bool()> may_write;
};

// What happened to one Karta.
struct PublishedKarta {
  enum class Outcome {
    kCreated,
    kConfigured,  // applied, and the object changed
    kUnchanged,   // applied, and nothing changed (same resourceVersion)
    kKept,        // not applied: someone else owns a field we would set (a user's change), or
                  // not pruned: someone else changed its spec
    kPruned,
    kFailed,
  };
  std::string name;
  Outcome outcome = Outcome::kFailed;
  std::string detail;  // why kept or failed
};

// "created", "configured", ...: for output.
const char* OutcomeName(PublishedKarta::Outcome outcome);

// Server-side applies each Karta document (YAML or JSON text, e.g. the
// built-in catalog) with our field manager and kCatalogLabel, without
// force: where another manager owns a field we would set to another value
// (a user edited it), the apiserver refuses the apply and the Karta is
// kept as the user left it (kKept, naming the fields and the manager).
// Applying what is already there changes nothing (kUnchanged: the
// apiserver does not write a no-op apply). With `prune`, catalog Kartas
// that are no longer in `documents` are deleted (with their
// resourceVersion as precondition), except those whose spec another
// manager changed (kKept). Fails only when a document is not a Karta with
// a name, or when Kartas cannot be listed for prune; a Karta that fails is
// reported and the others go on.
absl::StatusOr<std::vector<PublishedKarta>> PublishKartas(
    const kube::ApiClient& client,
    const std::vector<std::pair<std::string, std::string>>& documents,
    const PublishOptions& options);

}  // namespace wm::controllers

#endif  // WM_SERVER_CONTROLLERS_CATALOG_PUBLISHER_H_
