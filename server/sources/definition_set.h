#ifndef WM_SERVER_SOURCES_DEFINITION_SET_H_
#define WM_SERVER_SOURCES_DEFINITION_SET_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/definitions/registry.h"
#include "server/kube/cluster_cache.h"

namespace wm::sources {

// The root kinds of the definitions, their component kinds and their
// additional child kinds: what the cache must watch.
std::vector<Gvk> KindsToWatch(const definitions::Registry& registry);

// The Karta kind: cluster definitions are objects of run.ai/v1alpha1 Karta.
Gvk KartaGvk();
// Whether a definition's (or a rejected definition's) source is a Karta
// object of the cluster.
bool IsKartaSource(absl::string_view source);

// The definitions in force: a fixed base (the built-in catalog and files)
// overlaid with the Karta objects of a cluster. Each change of a Karta
// object publishes a new immutable Registry (readers keep the one they
// hold), in which a cluster definition overrides the base ones for its root
// kind. An invalid Karta is left out and its findings kept in rejected();
// the others are unaffected.
class DefinitionSet {
 public:
  // Fills a fresh registry with the base definitions.
  using BaseLoader = std::function<absl::Status(definitions::Registry&)>;
  // Told of each new registry, with the kinds it needs watched.
  using Listener = std::function<void(std::shared_ptr<const definitions::Registry>,
                                      const std::vector<Gvk>& kinds)>;

  DefinitionSet(expressions::Engine& engine, BaseLoader base);

  // Loads the base; fails when the base does not load.
  absl::Status Init();
  void SetListener(Listener listener);

  // Feeds Karta changes (a ClusterCache handler for KartaGvk()).
  void OnKartaChange(const kube::Change& change);

  std::shared_ptr<const definitions::Registry> Current() const;
  // Cluster definitions that were rejected, with their findings.
  std::vector<definitions::Registry::Rejected> rejected() const;

 private:
  absl::Status Rebuild();

  expressions::Engine& engine_;
  BaseLoader base_;
  mutable std::mutex mu_;
  Listener listener_;
  // Karta name -> its object as JSON text.
  std::map<std::string, std::string> kartas_;
  std::shared_ptr<const definitions::Registry> current_;
  std::vector<definitions::Registry::Rejected> rejected_;
};

}  // namespace wm::sources

#endif  // WM_SERVER_SOURCES_DEFINITION_SET_H_
