#include "server/kube/auth/kubeconfig.h"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/common/file.h"
#include "server/common/json.h"
#include "server/common/yaml_json.h"
#include "server/kube/auth/internal.h"

namespace wm::kube {
namespace {

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// An environment variable that is set and non-empty.
std::optional<std::string> NonEmptyEnv(const EnvLookup& lookup, const std::string& name) {
  std::optional<std::string> value = lookup ? lookup(name) : ProcessEnv(name);
  if (value.has_value() && value->empty()) return std::nullopt;
  return value;
}

// One object of a kubeconfig file, with what is needed to report errors in
// it and to resolve the relative paths it holds.
struct Node {
  Json body;          // an object
  std::string file;   // the kubeconfig file, as named
  std::string dir;    // that file's absolute directory
  std::string where;  // its field path in the file, e.g. "users[0].user"

  std::string FieldPath(absl::string_view key) const {
    return where.empty() ? std::string(key) : absl::StrCat(where, ".", key);
  }

  absl::Status Error(absl::string_view key, absl::string_view message,
                     absl::StatusCode code = absl::StatusCode::kInvalidArgument) const {
    std::string path = key.empty() ? where : FieldPath(key);
    return absl::Status(code, absl::StrCat("kubeconfig ", file, ": ", path, ": ", message));
  }

  // Prefixes a status from reading a file named by `key`.
  absl::Status Wrap(absl::string_view key, const absl::Status& status) const {
    return Error(key, status.message(), status.code());
  }

  // The member or null when absent.
  const Json* Get(absl::string_view key) const {
    auto it = body.find(std::string(key));
    if (it == body.end() || it->is_null()) return nullptr;
    return &*it;
  }

  absl::StatusOr<std::string> String(absl::string_view key) const {
    const Json* value = Get(key);
    if (value == nullptr) return std::string();
    if (!value->is_string()) return Error(key, "must be a string");
    return value->get<std::string>();
  }

  absl::StatusOr<bool> Bool(absl::string_view key) const {
    const Json* value = Get(key);
    if (value == nullptr) return false;
    if (!value->is_boolean()) return Error(key, "must be a boolean");
    return value->get<bool>();
  }

  absl::StatusOr<std::vector<std::string>> StringList(absl::string_view key) const {
    std::vector<std::string> out;
    const Json* value = Get(key);
    if (value == nullptr) return out;
    if (!value->is_array()) return Error(key, "must be a list of strings");
    for (size_t i = 0; i < value->size(); ++i) {
      if (!(*value)[i].is_string()) {
        return Error(absl::StrCat(key, "[", i, "]"), "must be a string");
      }
      out.push_back((*value)[i].get<std::string>());
    }
    return out;
  }

  // The member as a Node (an absent/null one is an empty object).
  absl::StatusOr<Node> Child(absl::string_view key) const {
    Node child{Json::object(), file, dir, FieldPath(key)};
    const Json* value = Get(key);
    if (value == nullptr) return child;
    if (!value->is_object()) return Error(key, "must be a mapping");
    child.body = *value;
    return child;
  }

  // A path field resolved against the file's directory; "" when unset.
  absl::StatusOr<std::string> Path(absl::string_view key) const {
    absl::StatusOr<std::string> value = String(key);
    if (!value.ok() || value->empty()) return value;
    return internal::ResolvePath(dir, *value);
  }

  // The content of the file named by field `key`.
  absl::StatusOr<std::string> ReadPathField(absl::string_view key) const {
    absl::StatusOr<std::string> path = Path(key);
    if (!path.ok()) return path.status();
    absl::StatusOr<std::string> content = ReadFileToString(*path);
    if (!content.ok()) return Wrap(key, content.status());
    return content;
  }

  // A base64 field (*-data) decoded.
  absl::StatusOr<std::string> Base64Field(absl::string_view key) const {
    absl::StatusOr<std::string> value = String(key);
    if (!value.ok() || value->empty()) return value;
    std::string compact;
    for (char c : *value) {
      if (!absl::ascii_isspace(static_cast<unsigned char>(c))) compact.push_back(c);
    }
    std::string decoded;
    if (!absl::Base64Unescape(compact, &decoded)) return Error(key, "not valid base64");
    return decoded;
  }

  // `data_key` decoded when set, else the file named by `file_key`, else "".
  absl::StatusOr<std::string> DataOrFile(absl::string_view data_key,
                                         absl::string_view file_key) const {
    absl::StatusOr<std::string> data = Base64Field(data_key);
    if (!data.ok() || !data->empty()) return data;
    absl::StatusOr<std::string> path = Path(file_key);
    if (!path.ok() || path->empty()) return path;
    return ReadPathField(file_key);
  }
};

// The merged kubeconfig.
struct Merged {
  std::vector<std::string> files;  // those read, in order
  std::map<std::string, Node> clusters, users, contexts;
  std::string current_context;

  std::string Files() const { return absl::StrJoin(files, ":"); }
};

#define WM_ASSIGN_OR_RETURN_IMPL(var, tmp, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  var = *std::move(tmp)
#define WM_CONCAT_INNER(a, b) a##b
#define WM_CONCAT(a, b) WM_CONCAT_INNER(a, b)
#define ASSIGN_OR_RETURN(var, expr) \
  WM_ASSIGN_OR_RETURN_IMPL(var, WM_CONCAT(status_or_, __LINE__), expr)

std::string AbsoluteDir(const std::string& file) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(file, error);
  if (error) return std::filesystem::path(file).parent_path().string();
  return absolute.lexically_normal().parent_path().string();
}

// Adds one file's clusters/users/contexts and current-context to `merged`.
absl::Status MergeFile(const std::string& file, const std::string& content, Merged& merged) {
  auto file_error = [&](absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", file, ": ", message));
  };
  absl::StatusOr<std::vector<Json>> documents = ParseYamlDocuments(content);
  if (!documents.ok()) return file_error(documents.status().message());
  merged.files.push_back(file);
  if (documents->empty()) return absl::OkStatus();  // an empty file is an empty config
  if (documents->size() > 1) {
    return file_error(absl::StrCat("holds ", documents->size(), " YAML documents, want one"));
  }
  const Json& doc = documents->front();
  if (doc.is_null()) return absl::OkStatus();
  if (!doc.is_object()) return file_error("not a mapping");
  Node root{doc, file, AbsoluteDir(file), ""};

  struct Section {
    const char* list;
    const char* item;
    std::map<std::string, Node>* into;
  };
  for (const Section& section :
       {Section{"clusters", "cluster", &merged.clusters}, Section{"users", "user", &merged.users},
        Section{"contexts", "context", &merged.contexts}}) {
    const Json* list = root.Get(section.list);
    if (list == nullptr) continue;
    if (!list->is_array()) return root.Error(section.list, "must be a list");
    // Within one file a later entry replaces an earlier one of the same name
    // (client-go's conversion); across files the first file wins.
    std::map<std::string, Node> local;
    for (size_t i = 0; i < list->size(); ++i) {
      std::string at = absl::StrCat(section.list, "[", i, "]");
      if (!(*list)[i].is_object()) return root.Error(at, "must be a mapping");
      Node item{(*list)[i], file, root.dir, at};
      ASSIGN_OR_RETURN(std::string name, item.String("name"));
      if (name.empty()) return item.Error("name", "not set");
      ASSIGN_OR_RETURN(Node body, item.Child(section.item));
      local.insert_or_assign(name, std::move(body));
    }
    for (auto& [name, node] : local) section.into->emplace(name, std::move(node));
  }
  ASSIGN_OR_RETURN(std::string current, root.String("current-context"));
  if (merged.current_context.empty()) merged.current_context = current;
  return absl::OkStatus();
}

absl::StatusOr<Merged> LoadMerged(const KubeconfigOptions& options) {
  std::vector<std::string> files;
  bool must_exist = true;
  std::string looked_at;
  if (!options.paths.empty()) {
    files = options.paths;
  } else if (std::optional<std::string> list = NonEmptyEnv(options.getenv, "KUBECONFIG")) {
    must_exist = false;
    std::set<std::string> seen;
    for (absl::string_view entry : absl::StrSplit(*list, ':', absl::SkipEmpty())) {
      if (seen.insert(std::string(entry)).second) files.emplace_back(entry);
    }
    looked_at = absl::StrCat("$KUBECONFIG (", *list, ")");
  } else {
    std::optional<std::string> home = NonEmptyEnv(options.getenv, "HOME");
    if (!home.has_value()) {
      return absl::FailedPreconditionError(
          "no kubeconfig: neither KUBECONFIG nor HOME is set and no file was given");
    }
    files.push_back(internal::ResolvePath(*home, ".kube/config"));
    must_exist = false;
    looked_at = files.back();
  }

  Merged merged;
  for (const std::string& file : files) {
    absl::StatusOr<std::string> content = ReadFileToString(file);
    if (!content.ok()) {
      if (!must_exist && absl::IsNotFound(content.status())) continue;  // client-go skips these
      return absl::Status(content.status().code(),
                          absl::StrCat("kubeconfig ", file, ": ", content.status().message()));
    }
    if (absl::Status merged_ok = MergeFile(file, *content, merged); !merged_ok.ok()) {
      return merged_ok;
    }
  }
  if (merged.files.empty()) {
    return absl::NotFoundError(absl::StrCat("no kubeconfig: ", looked_at, " does not exist"));
  }
  return merged;
}

absl::Status ApplyCluster(const Node& cluster, ClusterConnection& out) {
  ASSIGN_OR_RETURN(out.server, cluster.String("server"));
  if (out.server.empty()) return cluster.Error("server", "not set");
  while (!out.server.empty() && out.server.back() == '/') out.server.pop_back();
  if (!absl::StrContains(out.server, "://")) out.server = absl::StrCat("https://", out.server);

  ASSIGN_OR_RETURN(out.ca_pem,
                   cluster.DataOrFile("certificate-authority-data", "certificate-authority"));
  ASSIGN_OR_RETURN(out.insecure_skip_tls_verify, cluster.Bool("insecure-skip-tls-verify"));
  if (out.insecure_skip_tls_verify && !out.ca_pem.empty()) {
    return cluster.Error("insecure-skip-tls-verify",
                         "specifying a root certificates file with the insecure flag is not "
                         "allowed");
  }
  ASSIGN_OR_RETURN(out.tls_server_name, cluster.String("tls-server-name"));
  ASSIGN_OR_RETURN(out.proxy_url, cluster.String("proxy-url"));
  return absl::OkStatus();
}

absl::StatusOr<ExecConfig> ParseExec(const Node& exec) {
  ExecConfig config;
  config.base_dir = exec.dir;
  ASSIGN_OR_RETURN(config.command, exec.String("command"));
  if (config.command.empty()) return exec.Error("command", "not set");
  ASSIGN_OR_RETURN(config.api_version, exec.String("apiVersion"));
  if (config.api_version.empty()) return exec.Error("apiVersion", "not set");
  if (config.api_version != "client.authentication.k8s.io/v1" &&
      config.api_version != "client.authentication.k8s.io/v1beta1") {
    return exec.Error("apiVersion",
                      absl::StrCat("\"", config.api_version,
                                   "\" is not supported (want client.authentication.k8s.io/v1 "
                                   "or client.authentication.k8s.io/v1beta1)"));
  }
  ASSIGN_OR_RETURN(config.args, exec.StringList("args"));
  if (const Json* env = exec.Get("env")) {
    if (!env->is_array()) return exec.Error("env", "must be a list");
    for (size_t i = 0; i < env->size(); ++i) {
      std::string at = absl::StrCat("env[", i, "]");
      if (!(*env)[i].is_object()) return exec.Error(at, "must be a mapping");
      Node item{(*env)[i], exec.file, exec.dir, exec.FieldPath(at)};
      ASSIGN_OR_RETURN(std::string name, item.String("name"));
      if (name.empty()) return item.Error("name", "not set");
      ASSIGN_OR_RETURN(std::string value, item.String("value"));
      config.env.emplace_back(std::move(name), std::move(value));
    }
  }
  ASSIGN_OR_RETURN(config.interactive_mode, exec.String("interactiveMode"));
  if (config.interactive_mode == "Always") {
    return exec.Error("interactiveMode",
                      "exec plugin requires interactive mode (Always), but this daemon has no "
                      "terminal",
                      absl::StatusCode::kFailedPrecondition);
  }
  if (!config.interactive_mode.empty() && config.interactive_mode != "Never" &&
      config.interactive_mode != "IfAvailable") {
    return exec.Error(
        "interactiveMode",
        absl::StrCat("\"", config.interactive_mode, "\" is not one of Never, IfAvailable, Always"));
  }
  ASSIGN_OR_RETURN(config.provide_cluster_info, exec.Bool("provideClusterInfo"));
  ASSIGN_OR_RETURN(config.install_hint, exec.String("installHint"));
  return config;
}

absl::Status ApplyUser(const Node& user, const ExecOptions& exec_options, ClusterConnection& out) {
  if (const Json* provider = user.Get("auth-provider")) {
    std::string name = "?";
    if (provider->is_object() && provider->contains("name") && (*provider)["name"].is_string()) {
      name = (*provider)["name"].get<std::string>();
    }
    return user.Error("auth-provider",
                      absl::StrCat("auth-provider \"", name,
                                   "\" is not supported (client-go removed auth providers in "
                                   "Kubernetes 1.26); use an exec credential plugin"),
                      absl::StatusCode::kUnimplemented);
  }
  for (const char* key : {"username", "password"}) {
    ASSIGN_OR_RETURN(std::string value, user.String(key));
    if (!value.empty()) {
      return user.Error(key,
                        "basic authentication (username/password) is not supported (the "
                        "apiserver removed it in Kubernetes 1.19)",
                        absl::StatusCode::kUnimplemented);
    }
  }

  ASSIGN_OR_RETURN(out.client_cert_pem,
                   user.DataOrFile("client-certificate-data", "client-certificate"));
  ASSIGN_OR_RETURN(out.client_key_pem, user.DataOrFile("client-key-data", "client-key"));
  if (!out.client_cert_pem.empty() && out.client_key_pem.empty()) {
    return user.Error("client-key", "not set, but client-certificate is");
  }
  if (out.client_cert_pem.empty() && !out.client_key_pem.empty()) {
    return user.Error("client-certificate", "not set, but client-key is");
  }

  ASSIGN_OR_RETURN(out.impersonate.user, user.String("as"));
  ASSIGN_OR_RETURN(out.impersonate.groups, user.StringList("as-groups"));
  ASSIGN_OR_RETURN(out.impersonate.uid, user.String("as-uid"));
  if (const Json* extra = user.Get("as-user-extra")) {
    if (!extra->is_object()) return user.Error("as-user-extra", "must be a mapping");
    ASSIGN_OR_RETURN(Node extras, user.Child("as-user-extra"));
    for (auto it = extra->begin(); it != extra->end(); ++it) {
      ASSIGN_OR_RETURN(out.impersonate.extra[it.key()], extras.StringList(it.key()));
    }
  }

  ASSIGN_OR_RETURN(std::string token, user.String("token"));
  ASSIGN_OR_RETURN(std::string token_file, user.Path("tokenFile"));
  const bool has_exec = user.Get("exec") != nullptr;
  if (has_exec && (!token.empty() || !token_file.empty())) {
    return user.Error(!token.empty() ? "token" : "tokenFile",
                      "set together with exec; only one of them is allowed");
  }
  if (!token.empty()) {
    out.credentials = StaticToken(token);  // wins over tokenFile, as in client-go
  } else if (!token_file.empty()) {
    out.credentials = TokenFile(token_file);
    if (absl::StatusOr<Credential> first = out.credentials->Current(); !first.ok()) {
      return user.Wrap("tokenFile", first.status());
    }
  } else if (has_exec) {
    ASSIGN_OR_RETURN(Node exec, user.Child("exec"));
    ASSIGN_OR_RETURN(ExecConfig config, ParseExec(exec));
    ExecClusterInfo cluster;
    cluster.server = out.server;
    if (!out.ca_pem.empty())
      cluster.certificate_authority_data_base64 = absl::Base64Escape(out.ca_pem);
    cluster.insecure_skip_tls_verify = out.insecure_skip_tls_verify;
    cluster.tls_server_name = out.tls_server_name;
    cluster.proxy_url = out.proxy_url;
    out.credentials = ExecPlugin(std::move(config), std::move(cluster), exec_options);
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterConnection> Resolve(const Merged& merged, const std::string& name,
                                          const ExecOptions& exec_options) {
  if (name.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kubeconfig ", merged.Files(), ": no current-context is set and no context was given"));
  }
  auto context = merged.contexts.find(name);
  if (context == merged.contexts.end()) {
    return absl::NotFoundError(
        absl::StrCat("kubeconfig ", merged.Files(), ": context \"", name, "\" not found"));
  }
  const Node& ctx = context->second;
  ClusterConnection out;
  out.context = name;
  ASSIGN_OR_RETURN(std::string cluster_name, ctx.String("cluster"));
  if (cluster_name.empty()) return ctx.Error("cluster", "not set");
  auto cluster = merged.clusters.find(cluster_name);
  if (cluster == merged.clusters.end()) {
    return ctx.Error("cluster", absl::StrCat("cluster \"", cluster_name, "\" not found"),
                     absl::StatusCode::kNotFound);
  }
  ASSIGN_OR_RETURN(std::string user_name, ctx.String("user"));
  auto user = merged.users.end();
  if (!user_name.empty()) {
    user = merged.users.find(user_name);
    if (user == merged.users.end()) {
      return ctx.Error("user", absl::StrCat("user \"", user_name, "\" not found"),
                       absl::StatusCode::kNotFound);
    }
  }
  ASSIGN_OR_RETURN(out.namespace_, ctx.String("namespace"));
  if (out.namespace_.empty()) out.namespace_ = "default";

  if (absl::Status status = ApplyCluster(cluster->second, out); !status.ok()) return status;
  if (user != merged.users.end()) {
    if (absl::Status status = ApplyUser(user->second, exec_options, out); !status.ok()) {
      return status;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ClusterConnection> LoadKubeconfig(const KubeconfigOptions& options) {
  ASSIGN_OR_RETURN(Merged merged, LoadMerged(options));
  return Resolve(merged, options.context.empty() ? merged.current_context : options.context,
                 options.exec_options);
}

absl::StatusOr<std::vector<std::string>> KubeconfigContexts(const KubeconfigOptions& options) {
  ASSIGN_OR_RETURN(Merged merged, LoadMerged(options));
  std::vector<std::string> names;
  for (const auto& [name, unused] : merged.contexts) names.push_back(name);
  return names;
}

absl::StatusOr<std::string> KubeconfigCurrentContext(const KubeconfigOptions& options) {
  ASSIGN_OR_RETURN(Merged merged, LoadMerged(options));
  return merged.current_context;
}

absl::StatusOr<ClusterConnection> InClusterConnection(const InClusterOptions& options) {
  std::optional<std::string> host = NonEmptyEnv(options.getenv, "KUBERNETES_SERVICE_HOST");
  std::optional<std::string> port = NonEmptyEnv(options.getenv, "KUBERNETES_SERVICE_PORT");
  if (!host.has_value() || !port.has_value()) {
    return absl::FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
        "set");
  }
  ClusterConnection out;
  out.context = "in-cluster";
  if (absl::StrContains(*host, ':') && host->front() != '[') *host = absl::StrCat("[", *host, "]");
  out.server = absl::StrCat("https://", *host, ":", *port);

  const std::string& dir = options.secrets_dir;
  out.credentials =
      TokenFile(internal::ResolvePath(dir, "token"), options.token_reread_interval, options.clock);
  if (absl::StatusOr<Credential> first = out.credentials->Current(); !first.ok()) {
    return absl::Status(first.status().code(),
                        absl::StrCat("in-cluster: ", first.status().message()));
  }
  absl::StatusOr<std::string> ca = ReadFileToString(internal::ResolvePath(dir, "ca.crt"));
  if (!ca.ok()) {
    return absl::Status(ca.status().code(), absl::StrCat("in-cluster CA: ", ca.status().message()));
  }
  out.ca_pem = *std::move(ca);

  if (std::optional<std::string> ns = NonEmptyEnv(options.getenv, "POD_NAMESPACE")) {
    out.namespace_ = *ns;
  } else if (absl::StatusOr<std::string> file =
                 ReadFileToString(internal::ResolvePath(dir, "namespace"));
             file.ok()) {
    out.namespace_ = std::string(absl::StripAsciiWhitespace(*file));
  }
  if (out.namespace_.empty()) out.namespace_ = "default";
  return out;
}

}  // namespace wm::kube
