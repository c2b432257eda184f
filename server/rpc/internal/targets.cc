#include "server/rpc/internal/targets.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/common/kube_names.h"
#include "server/common/user_text.h"

namespace wm::rpc::internal {

namespace v1 = workloadmap::v1;
using ::wm::index::Cluster;
using ::wm::index::WorkloadIndex;
using ::wm::index::WorkloadView;

absl::StatusOr<Cluster*> PickCluster(const WorkloadIndex& index, const std::string& name) {
  if (index.clusters().empty()) return absl::UnavailableError("the daemon serves no cluster");
  if (name.empty()) return index.clusters().front();
  if (Cluster* c = index.FindCluster(name)) return c;
  std::vector<std::string> names;
  for (const Cluster* c : index.clusters()) names.push_back(c->name());
  return absl::NotFoundError(absl::StrCat("cluster ", QuoteUserText(name),
                                          " is not served (clusters: ", absl::StrJoin(names, ", "),
                                          ")"));
}

std::string NamespaceOf(const v1::ObjectRef& ref) {
  return ref.namespace_().empty() ? "default" : ref.namespace_();
}

absl::StatusOr<Target> FindTarget(const WorkloadIndex& index, KindNamesCache& kind_names,
                                  const v1::ObjectRef& ref, const std::string& field) {
  auto cluster = PickCluster(index, ref.cluster());
  if (!cluster.ok()) return cluster.status();
  if (ref.name().empty()) return absl::InvalidArgumentError(field + ": name is required");
  // Longer names and namespaces cannot exist; they are not echoed.
  if (ref.name().size() > kMaxDns1123SubdomainLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".name: ", ref.name().size(), " characters, more than the ",
                     kMaxDns1123SubdomainLength, " of a Kubernetes name"));
  }
  if (ref.namespace_().size() > kMaxDns1123LabelLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".namespace: ", ref.namespace_().size(), " characters, more than the ",
                     kMaxDns1123LabelLength, " of a Kubernetes namespace"));
  }
  auto gvk = kind_names.For(**cluster)->Resolve(ref, field);
  if (!gvk.ok()) return gvk.status();
  return Target{*cluster, *gvk, kube::ObjectKey(NamespaceOf(ref), ref.name())};
}

absl::StatusOr<std::shared_ptr<const kube::CachedObject>> CachedObjectOf(const Target& t) {
  auto store = t.cluster->view().StoreFor(t.gvk);
  auto object = store ? store->Get(t.key) : nullptr;
  if (object) return object;
  std::string problem = t.cluster->KindProblem(t.gvk);
  if (absl::StrContains(problem, "not yet synced")) {
    return absl::UnavailableError(absl::StrCat(t.gvk.ToString(), " in cluster ", t.cluster->name(),
                                               ": ", problem, "; retry"));
  }
  return absl::NotFoundError(absl::StrCat(t.gvk.kind, " ", t.key, " not found in cluster ",
                                          t.cluster->name(),
                                          problem.empty() ? "" : " (" + problem + ")"));
}

absl::StatusOr<Target> TopOwnerOf(const Target& t) {
  auto object = CachedObjectOf(t);
  if (!object.ok()) return object.status();
  auto top = t.cluster->view().TopOwner(t.gvk, *object);
  return Target{t.cluster, top.gvk, top.object->key()};
}

access::ResourceAttributes AttributesOf(const Target& t, const std::string& verb) {
  access::ResourceAttributes what;
  what.verb = verb;
  what.group = t.gvk.group;
  what.resource = t.cluster->Resource(t.gvk);
  // Keys are "namespace/name", or "name" for cluster-scoped objects.
  if (size_t slash = t.key.find('/'); slash != std::string::npos) {
    what.namespace_ = t.key.substr(0, slash);
    what.name = t.key.substr(slash + 1);
  } else {
    what.name = t.key;
  }
  return what;
}

absl::StatusOr<std::shared_ptr<const definitions::CompiledDefinition>> DefinitionFor(
    const Cluster& cluster, const Gvk& gvk) {
  auto registry = cluster.definitions();
  if (!registry) return absl::FailedPreconditionError("no definitions are loaded");
  auto def = registry->ForKind(gvk);
  if (def.ok()) return def;
  if (absl::IsNotFound(def.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat("no definition covers ", gvk.ToString(), ": ", def.status().message()));
  }
  return def.status();
}

absl::StatusOr<std::shared_ptr<const WorkloadView>> PublishedViewOf(const WorkloadIndex& index,
                                                                    const Target& t) {
  if (absl::Status s = DefinitionFor(*t.cluster, t.gvk).status(); !s.ok()) return s;
  std::shared_ptr<const WorkloadView> view = index.Get({t.cluster->name(), t.gvk, t.key});
  if (view && !view->error.ok()) return view->error;
  return view;
}

absl::StatusOr<std::shared_ptr<const WorkloadView>> ResolvedViewOf(WorkloadIndex& index,
                                                                   const Target& t) {
  auto object = CachedObjectOf(t);
  if (!object.ok()) return object.status();
  auto view = index.ResolveNow({t.cluster->name(), t.gvk, t.key});
  if (!view.ok()) return view.status();
  if (!(*view)->error.ok()) return (*view)->error;
  return view;
}

}  // namespace wm::rpc::internal
