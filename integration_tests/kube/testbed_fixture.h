#ifndef WM_INTEGRATION_TESTS_KUBE_TESTBED_FIXTURE_H_
#define WM_INTEGRATION_TESTS_KUBE_TESTBED_FIXTURE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/common/gvk.h"
#include "server/common/json.h"
#include "server/kube/api_client.h"

namespace wm::testing {

// The running testbed (integration_tests/testbed/testbed.sh start DIR), found
// through $WM_TESTBED_DIR. Tests fail, not skip, when it is missing: the
// README's test command always starts it.
class Testbed {
 public:
  static Testbed& Get();

  const std::string& dir() const { return dir_; }
  std::string env(const std::string& key) const;
  std::string kubeconfig() const { return dir_ + "/kubeconfig"; }
  int apiserver_port() const;
  // An admin client (token from the kubeconfig).
  const kube::ApiClient& admin() const { return *admin_; }
  // A connection like the admin's but to another port (a proxy in front).
  kube::ClusterConnection AdminConnection(int port = 0) const;

  // Runs testbed.sh COMMAND DIR; returns its stdout.
  std::string Script(const std::string& command) const;

  // Sends a request as admin and returns the parsed answer; fails on any
  // status outside 2xx, naming it.
  absl::StatusOr<Json> Call(const std::string& method, const std::string& path,
                            const Json& body = nullptr,
                            const std::string& content_type = "application/json") const;
  // Creates a namespace with a unique name for one test.
  std::string NewNamespace(const std::string& prefix) const;
  // Creates ServiceAccount `name` in `ns` (the testbed runs no controller
  // that would).
  absl::Status CreateServiceAccount(const std::string& ns, const std::string& name) const;
  // Grants ServiceAccount ns/name the RBAC `rules` (a Role's rules) in its
  // namespace: a Role and a RoleBinding, both named after it.
  absl::Status BindRole(const std::string& ns, const std::string& name, const Json& rules) const;
  // Grants ServiceAccount ns/name the RBAC `rules` in every namespace: a
  // ClusterRole and a ClusterRoleBinding, both named "<ns>-<name>".
  absl::Status BindClusterRole(const std::string& ns, const std::string& name,
                               const Json& rules) const;
  // A 10-minute token of ServiceAccount ns/name for `audience`, from the
  // TokenRequest API, as the kubelet projects one into a pod.
  absl::StatusOr<std::string> ServiceAccountToken(const std::string& ns, const std::string& name,
                                                  const std::string& audience) const;

 private:
  Testbed();
  std::string dir_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<kube::ApiClient> admin_;
};

// A namespaced CustomResourceDefinition serving `gvk` (one version) under
// `plural`, whose objects may hold any fields: what a test needs of a kind
// it creates and deletes itself.
Json SchemalessCrd(const Gvk& gvk, const std::string& plural, const std::string& singular);

}  // namespace wm::testing

#endif  // WM_INTEGRATION_TESTS_KUBE_TESTBED_FIXTURE_H_
