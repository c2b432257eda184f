#include "server/kube/auth/kubeconfig.h"

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/kube/auth/test_util.h"

namespace wm::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kCa[] = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
constexpr char kCert[] = "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n";
constexpr char kKey[] = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";

EnvLookup Env(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

class KubeconfigTest : public testing::TempDirTest {
 protected:
  // Options reading exactly `paths`, in an empty environment.
  KubeconfigOptions Files(std::vector<std::string> paths, std::string context = "") {
    KubeconfigOptions options;
    options.paths = std::move(paths);
    options.context = std::move(context);
    options.getenv = Env({});
    return options;
  }

  std::string Token(const ClusterConnection& connection) {
    if (connection.credentials == nullptr) return "<no credentials>";
    absl::StatusOr<Credential> credential = connection.credentials->Current();
    if (!credential.ok()) return std::string(credential.status().message());
    return credential->bearer_token;
  }
};

TEST_F(KubeconfigTest, SingleFile) {
  std::string config = Write("config", absl::StrCat(R"(apiVersion: v1
kind: Config
preferences: {colors: true}
current-context: dev
clusters:
- name: kind
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: )",
                                                    absl::Base64Escape(kCa), R"(
users:
- name: admin
  user:
    token: secret-token
    as: jane
    as-groups: [devs, ops]
contexts:
- name: dev
  context:
    cluster: kind
    user: admin
    namespace: team-a
)"));
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->context, "dev");
  EXPECT_EQ(got->server, "https://127.0.0.1:6443");
  EXPECT_EQ(got->ca_pem, kCa);
  EXPECT_FALSE(got->insecure_skip_tls_verify);
  EXPECT_EQ(got->namespace_, "team-a");
  EXPECT_EQ(got->impersonate.user, "jane");
  EXPECT_THAT(got->impersonate.groups, ElementsAre("devs", "ops"));
  EXPECT_EQ(got->client_cert_pem, "");
  EXPECT_EQ(Token(*got), "secret-token");
}

TEST_F(KubeconfigTest, MergesFilesFirstDefinitionWins) {
  std::string a = Write("a/config", R"(
clusters:
- name: shared
  cluster: {server: "https://a.example"}
contexts:
- name: ctx-a
  context: {cluster: shared, user: from-b}
)");
  std::string b = Write("b/config", R"(
current-context: ctx-b
clusters:
- name: shared
  cluster: {server: "https://b.example"}
- name: only-b
  cluster: {server: "https://only-b.example"}
users:
- name: from-b
  user: {token: b-token}
contexts:
- name: ctx-b
  context: {cluster: shared, user: from-b}
- name: ctx-a
  context: {cluster: only-b}
)");
  std::string c = Write("c/config", "current-context: ctx-a\n");
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({a, b, c}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->context, "ctx-b");             // the first non-empty current-context
  EXPECT_EQ(got->server, "https://a.example");  // a's "shared" beats b's
  EXPECT_EQ(Token(*got), "b-token");

  got = LoadKubeconfig(Files({a, b, c}, "ctx-a"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->server, "https://a.example");  // a's ctx-a, not b's
  EXPECT_EQ(Token(*got), "b-token");

  absl::StatusOr<std::vector<std::string>> contexts = KubeconfigContexts(Files({a, b, c}));
  ASSERT_TRUE(contexts.ok()) << contexts.status();
  EXPECT_THAT(*contexts, ElementsAre("ctx-a", "ctx-b"));
  EXPECT_EQ(*KubeconfigCurrentContext(Files({c, b})), "ctx-a");
}

TEST_F(KubeconfigTest, MissingCurrentContextIsAnError) {
  std::string config = Write("config", R"(
clusters: [{name: c, cluster: {server: "https://x"}}]
contexts: [{name: only, context: {cluster: c}}]
)");
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(got.status().message(), HasSubstr("no current-context"));
  EXPECT_THAT(got.status().message(), HasSubstr(config));

  got = LoadKubeconfig(Files({config}, "only"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->server, "https://x");
  EXPECT_EQ(got->credentials, nullptr);
}

TEST_F(KubeconfigTest, ContextOverrideAndMissingReferences) {
  std::string config = Write("config", R"(
current-context: first
clusters:
- {name: one, cluster: {server: "https://one"}}
- {name: two, cluster: {server: "https://two"}}
contexts:
- {name: first, context: {cluster: one}}
- {name: second, context: {cluster: two}}
- {name: lost-cluster, context: {cluster: three}}
- {name: lost-user, context: {cluster: one, user: nobody}}
)");
  EXPECT_EQ(LoadKubeconfig(Files({config}))->server, "https://one");
  EXPECT_EQ(LoadKubeconfig(Files({config}, "second"))->server, "https://two");

  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}, "third"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr("context \"third\" not found"));

  got = LoadKubeconfig(Files({config}, "lost-cluster"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            absl::StrCat("kubeconfig ", config,
                         ": contexts[2].context.cluster: cluster \"three\" not found"));

  got = LoadKubeconfig(Files({config}, "lost-user"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), absl::StrCat("kubeconfig ", config,
                                                 ": contexts[3].context.user: user \"nobody\" "
                                                 "not found"));
}

TEST_F(KubeconfigTest, RelativePathsResolveAgainstTheDefiningFile) {
  Write("one/pki/ca.crt", kCa);
  std::string one = Write("one/config", R"(
current-context: ctx
clusters:
- name: c
  cluster: {server: "https://c", certificate-authority: pki/ca.crt}
contexts:
- {name: ctx, context: {cluster: c, user: u}}
)");
  Write("two/certs/client.crt", kCert);
  Write("two/certs/client.key", kKey);
  Write("two/token", "file-token\n");
  std::string two = Write("two/config", R"(
users:
- name: u
  user:
    client-certificate: certs/client.crt
    client-key: ./certs/client.key
    tokenFile: token
)");
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({one, two}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->ca_pem, kCa);
  EXPECT_EQ(got->client_cert_pem, kCert);
  EXPECT_EQ(got->client_key_pem, kKey);
  EXPECT_EQ(Token(*got), "file-token");
}

TEST_F(KubeconfigTest, DataFieldsWinOverFiles) {
  std::string config = Write("config", absl::StrCat(R"(
current-context: ctx
clusters:
- name: c
  cluster:
    server: https://c
    certificate-authority: does-not-exist.crt
    certificate-authority-data: )",
                                                    absl::Base64Escape(kCa), R"(
users:
- name: u
  user:
    client-certificate: missing.crt
    client-certificate-data: )",
                                                    absl::Base64Escape(kCert), R"(
    client-key-data: )",
                                                    absl::Base64Escape(kKey), R"(
contexts:
- {name: ctx, context: {cluster: c, user: u}}
)"));
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->ca_pem, kCa);
  EXPECT_EQ(got->client_cert_pem, kCert);
  EXPECT_EQ(got->client_key_pem, kKey);
  EXPECT_EQ(got->credentials, nullptr);
}

TEST_F(KubeconfigTest, FileErrorsNameTheFileAndField) {
  Write("client.crt", kCert);
  std::string config = Write("config", R"(
current-context: ctx
clusters: [{name: c, cluster: {server: "https://c"}}]
users:
- name: u
  user: {client-certificate: client.crt, client-key: client.key}
contexts: [{name: ctx, context: {cluster: c, user: u}}]
)");
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(
      got.status().message(),
      HasSubstr(absl::StrCat("kubeconfig ", config,
                             ": users[0].user.client-key: open failed: ", dir_, "/client.key")));

  std::string bad_data = Write("bad-data", R"(
current-context: ctx
clusters: [{name: c, cluster: {server: "https://c", certificate-authority-data: "!!!"}}]
contexts: [{name: ctx, context: {cluster: c}}]
)");
  got = LoadKubeconfig(Files({bad_data}));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            absl::StrCat("kubeconfig ", bad_data,
                         ": clusters[0].cluster.certificate-authority-data: not valid base64"));

  std::string bad_type = Write("bad-type", R"(
current-context: ctx
clusters: [{name: c, cluster: {server: "https://c", insecure-skip-tls-verify: "yes"}}]
contexts: [{name: ctx, context: {cluster: c}}]
)");
  got = LoadKubeconfig(Files({bad_type}));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            absl::StrCat("kubeconfig ", bad_type,
                         ": clusters[0].cluster.insecure-skip-tls-verify: must be a boolean"));

  std::string no_key = Write("no-key", absl::StrCat(R"(
current-context: ctx
clusters: [{name: c, cluster: {server: "https://c"}}]
users: [{name: u, user: {client-certificate-data: )",
                                                    absl::Base64Escape(kCert), R"(}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
)"));
  got = LoadKubeconfig(Files({no_key}));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("users[0].user.client-key: not set"));

  std::string broken = Write("broken", "clusters: [unclosed\n");
  got = LoadKubeconfig(Files({broken}));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr(absl::StrCat("kubeconfig ", broken, ": ")));
}

TEST_F(KubeconfigTest, InsecureTlsServerNameProxyAndServerForms) {
  std::string config = Write("config", R"(
current-context: ctx
clusters:
- name: c
  cluster:
    server: 10.1.2.3:6443//
    insecure-skip-tls-verify: true
    tls-server-name: kubernetes.default
    proxy-url: socks5://proxy:1080
- name: both
  cluster: {server: "https://x", insecure-skip-tls-verify: true, certificate-authority-data: Q0E=}
contexts:
- {name: ctx, context: {cluster: c}}
- {name: both, context: {cluster: both}}
)");
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->server, "https://10.1.2.3:6443");
  EXPECT_TRUE(got->insecure_skip_tls_verify);
  EXPECT_EQ(got->ca_pem, "");
  EXPECT_EQ(got->tls_server_name, "kubernetes.default");
  EXPECT_EQ(got->proxy_url, "socks5://proxy:1080");
  EXPECT_EQ(got->namespace_, "default");

  got = LoadKubeconfig(Files({config}, "both"));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("clusters[1].cluster.insecure-skip-tls-verify"));
  EXPECT_THAT(got.status().message(), HasSubstr("insecure flag is not allowed"));
}

TEST_F(KubeconfigTest, TokenWinsOverTokenFile) {
  Write("token", "from-file");
  std::string config = Write("config", R"(
current-context: both
clusters: [{name: c, cluster: {server: "https://c"}}]
users:
- {name: both, user: {token: inline, tokenFile: token}}
- {name: file, user: {tokenFile: token}}
- {name: missing, user: {tokenFile: nope}}
contexts:
- {name: both, context: {cluster: c, user: both}}
- {name: file, context: {cluster: c, user: file}}
- {name: missing, context: {cluster: c, user: missing}}
)");
  EXPECT_EQ(Token(*LoadKubeconfig(Files({config}))), "inline");
  EXPECT_EQ(Token(*LoadKubeconfig(Files({config}, "file"))), "from-file");
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}, "missing"));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(),
              HasSubstr(absl::StrCat("kubeconfig ", config, ": users[2].user.tokenFile: ")));
  EXPECT_THAT(got.status().message(), HasSubstr(dir_ + "/nope"));
}

TEST_F(KubeconfigTest, UnsupportedAuthMethodsAreNamed) {
  std::string config = Write("config", R"(
current-context: basic
clusters: [{name: c, cluster: {server: "https://c"}}]
users:
- {name: basic, user: {username: admin, password: hunter2}}
- {name: gcp, user: {auth-provider: {name: gcp, config: {}}}}
- {name: both, user: {token: t, exec: {command: x, apiVersion: client.authentication.k8s.io/v1}}}
contexts:
- {name: basic, context: {cluster: c, user: basic}}
- {name: gcp, context: {cluster: c, user: gcp}}
- {name: both, context: {cluster: c, user: both}}
)");
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(got.status().message(), HasSubstr("users[0].user.username: basic authentication"));

  got = LoadKubeconfig(Files({config}, "gcp"));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(got.status().message(), HasSubstr("auth-provider \"gcp\" is not supported"));

  got = LoadKubeconfig(Files({config}, "both"));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("users[2].user.token: set together with exec"));
}

TEST_F(KubeconfigTest, ExecPluginFromKubeconfig) {
  WriteScript("plugins/auth.sh", R"sh(d=$(dirname "$0")
printf '%s' "$KUBERNETES_EXEC_INFO" > "$d/info.json"
cat <<EOF
{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"exec-$1-$REGION"}}
EOF
)sh");
  std::string config = Write("config", absl::StrCat(R"(
current-context: ctx
clusters:
- name: c
  cluster:
    server: https://c:443
    tls-server-name: api.internal
    certificate-authority-data: )",
                                                    absl::Base64Escape(kCa), R"(
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./plugins/auth.sh
      args: [arg1]
      env: [{name: REGION, value: eu}]
      provideClusterInfo: true
      interactiveMode: Never
- name: always
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: x, interactiveMode: Always}
- name: no-command
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1}
contexts:
- {name: ctx, context: {cluster: c, user: u}}
- {name: always, context: {cluster: c, user: always}}
- {name: no-command, context: {cluster: c, user: no-command}}
)"));
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(Files({config}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Token(*got), "exec-arg1-eu");
  Json info = Json::parse(Read("plugins/info.json"), nullptr, false);
  ASSERT_FALSE(info.is_discarded()) << Read("plugins/info.json");
  EXPECT_EQ(info["spec"]["cluster"]["server"], "https://c:443");
  EXPECT_EQ(info["spec"]["cluster"]["tls-server-name"], "api.internal");
  EXPECT_EQ(info["spec"]["cluster"]["certificate-authority-data"], absl::Base64Escape(kCa));

  got = LoadKubeconfig(Files({config}, "always"));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("users[1].user.exec.interactiveMode"));
  EXPECT_THAT(got.status().message(), HasSubstr("exec plugin requires interactive mode"));

  got = LoadKubeconfig(Files({config}, "no-command"));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("users[2].user.exec.command: not set"));
}

TEST_F(KubeconfigTest, KubeconfigVariableAndHomeDefault) {
  std::string a = Write("a", R"(
clusters: [{name: c, cluster: {server: "https://from-a"}}]
contexts: [{name: ctx, context: {cluster: c}}]
)");
  std::string b = Write("b", "current-context: ctx\n");
  KubeconfigOptions options;
  options.getenv = Env({{"KUBECONFIG", absl::StrCat(dir_, "/missing::", a, ":", b, ":")}});
  absl::StatusOr<ClusterConnection> got = LoadKubeconfig(options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->server, "https://from-a");

  options.getenv = Env({{"KUBECONFIG", dir_ + "/missing"}});
  got = LoadKubeconfig(options);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);

  // An explicit path must exist, even with $KUBECONFIG set.
  options.paths = {dir_ + "/missing", a};
  options.getenv = Env({{"KUBECONFIG", a}});
  got = LoadKubeconfig(options);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr(dir_ + "/missing"));

  Write("home/.kube/config", R"(
current-context: h
clusters: [{name: c, cluster: {server: "https://home"}}]
contexts: [{name: h, context: {cluster: c, namespace: mine}}]
)");
  options.paths.clear();
  options.getenv = Env({{"HOME", dir_ + "/home"}});
  got = LoadKubeconfig(options);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->server, "https://home");
  EXPECT_EQ(got->namespace_, "mine");
}

class InClusterTest : public testing::TempDirTest {
 protected:
  InClusterOptions Options(std::map<std::string, std::string> env) {
    InClusterOptions options;
    options.secrets_dir = dir_;
    options.getenv = Env(std::move(env));
    options.clock = clock_.AsClock();
    return options;
  }
  testing::FakeClock clock_;
};

TEST_F(InClusterTest, Ipv4ServiceAccount) {
  Write("token", "sa-token-1\n");
  Write("ca.crt", kCa);
  Write("namespace", "workloads\n");
  absl::StatusOr<ClusterConnection> got = InClusterConnection(
      Options({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->context, "in-cluster");
  EXPECT_EQ(got->server, "https://10.96.0.1:443");
  EXPECT_EQ(got->ca_pem, kCa);
  EXPECT_EQ(got->namespace_, "workloads");
  ASSERT_NE(got->credentials, nullptr);
  EXPECT_EQ(got->credentials->Current()->bearer_token, "sa-token-1");

  // The kubelet rotates the projected token.
  Write("token", "sa-token-2\n");
  clock_.Advance(absl::Minutes(2));
  EXPECT_EQ(got->credentials->Current()->bearer_token, "sa-token-2");
}

TEST_F(InClusterTest, Ipv6HostGetsBracketsAndPodNamespaceWins) {
  Write("token", "t");
  Write("ca.crt", kCa);
  Write("namespace", "from-file");
  absl::StatusOr<ClusterConnection> got = InClusterConnection(Options({
      {"KUBERNETES_SERVICE_HOST", "fd00:10:96::1"},
      {"KUBERNETES_SERVICE_PORT", "6443"},
      {"POD_NAMESPACE", "from-env"},
  }));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->server, "https://[fd00:10:96::1]:6443");
  EXPECT_EQ(got->namespace_, "from-env");
}

TEST_F(InClusterTest, NamespaceDefaultsToDefault) {
  Write("token", "t");
  Write("ca.crt", kCa);
  absl::StatusOr<ClusterConnection> got = InClusterConnection(
      Options({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->namespace_, "default");
}

TEST_F(InClusterTest, Errors) {
  absl::StatusOr<ClusterConnection> got =
      InClusterConnection(Options({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}}));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(got.status().message(), HasSubstr("KUBERNETES_SERVICE_PORT"));

  got = InClusterConnection(
      Options({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr(dir_ + "/token"));

  Write("token", "t");
  got = InClusterConnection(
      Options({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr(dir_ + "/ca.crt"));
}

}  // namespace
}  // namespace wm::kube
