#include "integration_tests/kube/testbed_fixture.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/random/random.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "server/common/json_path.h"
#include "server/kube/auth/kubeconfig.h"

namespace wm::testing {

Testbed& Testbed::Get() {
  static Testbed* testbed = new Testbed();
  return *testbed;
}

Testbed::Testbed() {
  const char* dir = std::getenv("WM_TESTBED_DIR");
  if (dir == nullptr) {
    ADD_FAILURE() << "WM_TESTBED_DIR is not set: start the testbed with "
                     "integration_tests/testbed/testbed.sh start DIR";
    std::abort();
  }
  dir_ = dir;
  std::ifstream in(dir_ + "/env");
  std::string line;
  while (std::getline(in, line)) {
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    env_[kv.first] = kv.second;
  }
  kube::KubeconfigOptions options;
  options.paths = {kubeconfig()};
  absl::StatusOr<kube::ClusterConnection> connection = kube::LoadKubeconfig(options);
  if (!connection.ok()) {
    ADD_FAILURE() << connection.status();
    std::abort();
  }
  admin_ = std::make_unique<kube::ApiClient>(*connection);
}

std::string Testbed::env(const std::string& key) const {
  auto it = env_.find(key);
  return it == env_.end() ? "" : it->second;
}

int Testbed::apiserver_port() const {
  int port = 0;
  (void)absl::SimpleAtoi(env("APISERVER_PORT"), &port);
  return port;
}

kube::ClusterConnection Testbed::AdminConnection(int port) const {
  kube::ClusterConnection connection = admin_->connection();
  if (port != 0) connection.server = absl::StrCat("https://127.0.0.1:", port);
  return connection;
}

std::string Testbed::Script(const std::string& command) const {
  std::string cmd =
      absl::StrCat(WM_SOURCE_DIR, "/integration_tests/testbed/testbed.sh ", command, " ", dir_);
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  int rc = ::pclose(pipe);
  EXPECT_EQ(rc, 0) << cmd;
  return out;
}

absl::StatusOr<Json> Testbed::Call(const std::string& method, const std::string& path,
                                   const Json& body, const std::string& content_type) const {
  kube::HttpRequest request;
  request.method = method;
  request.path = path;
  if (!body.is_null()) {
    request.body = body.dump();
    request.content_type = content_type;
  }
  absl::StatusOr<kube::HttpResponse> response = admin_->Do(request);
  if (!response.ok()) return response.status();
  if (response->status / 100 != 2) {
    return absl::UnknownError(absl::StrCat(method, " ", path, ": HTTP ", response->status, ": ",
                                           kube::StatusMessage(response->body)));
  }
  return Json::parse(response->body, nullptr, false);
}

std::string Testbed::NewNamespace(const std::string& prefix) const {
  static absl::BitGen random;
  std::string name = absl::StrCat(prefix, "-", absl::Uniform<uint32_t>(random, 0, 1u << 30));
  absl::StatusOr<Json> created =
      Call("POST", "/api/v1/namespaces",
           Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
  EXPECT_TRUE(created.ok()) << created.status();
  return name;
}

absl::Status Testbed::CreateServiceAccount(const std::string& ns, const std::string& name) const {
  return Call("POST", "/api/v1/namespaces/" + ns + "/serviceaccounts",
              {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", name}}}})
      .status();
}

absl::Status Testbed::BindRole(const std::string& ns, const std::string& name,
                               const Json& rules) const {
  const std::string rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns;
  absl::Status role = Call("POST", rbac + "/roles",
                           {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                            {"kind", "Role"},
                            {"metadata", {{"name", name}}},
                            {"rules", rules}})
                          .status();
  if (!role.ok()) return role;
  return Call("POST", rbac + "/rolebindings",
              {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "RoleBinding"},
               {"metadata", {{"name", name}}},
               {"roleRef",
                {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}}},
               {"subjects", {{{"kind", "ServiceAccount"}, {"name", name}, {"namespace", ns}}}}})
      .status();
}

absl::Status Testbed::BindClusterRole(const std::string& ns, const std::string& name,
                                      const Json& rules) const {
  const std::string rbac = "/apis/rbac.authorization.k8s.io/v1";
  const std::string cluster_name = ns + "-" + name;
  absl::Status role = Call("POST", rbac + "/clusterroles",
                           {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                            {"kind", "ClusterRole"},
                            {"metadata", {{"name", cluster_name}}},
                            {"rules", rules}})
                          .status();
  if (!role.ok()) return role;
  return Call("POST", rbac + "/clusterrolebindings",
              {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "ClusterRoleBinding"},
               {"metadata", {{"name", cluster_name}}},
               {"roleRef",
                {{"apiGroup", "rbac.authorization.k8s.io"},
                 {"kind", "ClusterRole"},
                 {"name", cluster_name}}},
               {"subjects", {{{"kind", "ServiceAccount"}, {"name", name}, {"namespace", ns}}}}})
      .status();
}

absl::StatusOr<std::string> Testbed::ServiceAccountToken(const std::string& ns,
                                                         const std::string& name,
                                                         const std::string& audience) const {
  absl::StatusOr<Json> request =
      Call("POST", "/api/v1/namespaces/" + ns + "/serviceaccounts/" + name + "/token",
           {{"apiVersion", "authentication.k8s.io/v1"},
            {"kind", "TokenRequest"},
            {"spec", {{"audiences", {audience}}, {"expirationSeconds", 600}}}});
  if (!request.ok()) return request.status();
  const Json* token = Find(*request, {"status", "token"});
  if (token == nullptr || !token->is_string()) {
    return absl::InternalError("TokenRequest answered without status.token");
  }
  return token->get<std::string>();
}

Json SchemalessCrd(const Gvk& gvk, const std::string& plural, const std::string& singular) {
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", plural + "." + gvk.group}}},
          {"spec",
           {{"group", gvk.group},
            {"scope", "Namespaced"},
            {"names",
             {{"plural", plural},
              {"singular", singular},
              {"kind", gvk.kind},
              {"listKind", gvk.kind + "List"}}},
            {"versions",
             {{{"name", gvk.version},
               {"served", true},
               {"storage", true},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
}

}  // namespace wm::testing
