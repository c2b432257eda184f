#include "server/kube/auth/credentials.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "server/common/file.h"
#include "server/common/json.h"
#include "server/common/json_reader.h"
#include "server/kube/auth/internal.h"

extern char** environ;

namespace wm::kube {
namespace {

constexpr absl::string_view kExecV1 = "client.authentication.k8s.io/v1";
constexpr absl::string_view kExecV1beta1 = "client.authentication.k8s.io/v1beta1";

absl::Time NowFrom(const Clock& clock) { return clock ? clock() : absl::Now(); }

// The secret parts of two credentials agree (the expiry does not matter for
// "is this the credential the apiserver rejected").
bool SameSecret(const Credential& a, const Credential& b) {
  return a.bearer_token == b.bearer_token && a.client_cert_pem == b.client_cert_pem &&
         a.client_key_pem == b.client_key_pem;
}

class StaticTokenSource : public CredentialSource {
 public:
  explicit StaticTokenSource(std::string token) { credential_.bearer_token = std::move(token); }

  absl::StatusOr<Credential> Current() override {
    if (credential_.bearer_token.empty())
      return absl::FailedPreconditionError("empty bearer token");
    return credential_;
  }
  void Invalidate(const Credential&) override {}

 private:
  Credential credential_;
};

class TokenFileSource : public CredentialSource {
 public:
  TokenFileSource(std::string path, absl::Duration interval, Clock clock)
      : path_(std::move(path)), interval_(interval), clock_(std::move(clock)) {}

  absl::StatusOr<Credential> Current() override {
    std::unique_lock lock(mu_);
    const absl::Time now = NowFrom(clock_);
    if (cached_.has_value() && !invalidated_ && now - read_at_ < interval_) return *cached_;
    absl::StatusOr<std::string> token = Read();
    if (!token.ok()) {
      // client-go keeps serving the last good token when a rotation read
      // fails; read_at_ stays old so that the next call tries again.
      if (cached_.has_value() && !invalidated_) return *cached_;
      return token.status();
    }
    Credential credential;
    credential.bearer_token = *std::move(token);
    cached_ = credential;
    read_at_ = now;
    invalidated_ = false;
    return credential;
  }

  void Invalidate(const Credential& rejected) override {
    std::unique_lock lock(mu_);
    if (cached_.has_value() && SameSecret(*cached_, rejected)) invalidated_ = true;
  }

 private:
  absl::StatusOr<std::string> Read() const {
    absl::StatusOr<std::string> content = ReadFileToString(path_);
    if (!content.ok()) {
      return absl::Status(content.status().code(),
                          absl::StrCat("token file: ", content.status().message()));
    }
    std::string token(absl::StripAsciiWhitespace(*content));
    if (token.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("token file ", path_, " is empty"));
    }
    return token;
  }

  const std::string path_;
  const absl::Duration interval_;
  const Clock clock_;
  std::mutex mu_;
  std::optional<Credential> cached_;
  absl::Time read_at_;
  bool invalidated_ = false;
};

// A string member of a JSON object: absent or null is "", another type is an
// error naming `where`.
absl::StatusOr<std::string> StringMember(const Json& object, const char* key,
                                         absl::string_view where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat(where, key, " is not a string"));
  }
  return it->get<std::string>();
}

class ExecPluginSource : public CredentialSource {
 public:
  ExecPluginSource(ExecConfig config, ExecClusterInfo cluster, ExecOptions options)
      : config_(std::move(config)), cluster_(std::move(cluster)), options_(std::move(options)) {}

  absl::StatusOr<Credential> Current() override {
    std::unique_lock lock(mu_);
    const absl::Time now = NowFrom(options_.clock);
    if (cached_.has_value() &&
        (!cached_->expiry.has_value() || now < *cached_->expiry - options_.expiry_leeway)) {
      return *cached_;
    }
    if (!last_error_.ok() && now - failed_at_ < options_.min_retry_interval) return last_error_;
    absl::StatusOr<Credential> fresh = Run();
    if (!fresh.ok()) {
      last_error_ = fresh.status();
      failed_at_ = now;
      // A refresh attempted within the leeway failed, but what we have is
      // still valid: use it.
      if (cached_.has_value() && cached_->expiry.has_value() && now < *cached_->expiry) {
        return *cached_;
      }
      cached_.reset();
      return fresh.status();
    }
    last_error_ = absl::OkStatus();
    cached_ = *fresh;
    return fresh;
  }

  void Invalidate(const Credential& rejected) override {
    std::unique_lock lock(mu_);
    if (cached_.has_value() && SameSecret(*cached_, rejected)) cached_.reset();
  }

 private:
  std::string Prefix() const { return absl::StrCat("exec plugin \"", config_.command, "\": "); }

  // Appends the plugin's stderr, if any, to an error message.
  static std::string WithStderr(absl::string_view message, absl::string_view err) {
    absl::string_view trimmed = absl::StripAsciiWhitespace(err);
    if (trimmed.empty()) return std::string(message);
    return absl::StrCat(message, "; stderr: ", trimmed);
  }

  absl::Status NotInstalled(absl::string_view what) const {
    std::string message = absl::StrCat(Prefix(), what);
    if (!config_.install_hint.empty()) {
      absl::StrAppend(&message, "\n", absl::StripAsciiWhitespace(config_.install_hint));
    }
    return absl::NotFoundError(message);
  }

  absl::StatusOr<std::string> ResolveCommand() const {
    if (config_.command.empty()) return absl::InvalidArgumentError("exec plugin: no command");
    if (config_.command.find('/') != std::string::npos) {
      return internal::ResolvePath(config_.base_dir, config_.command);
    }
    const char* path_env = std::getenv("PATH");
    std::string search = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
    for (absl::string_view dir : absl::StrSplit(search, ':')) {
      std::string candidate = internal::ResolvePath(dir.empty() ? "." : dir, config_.command);
      struct stat info;
      if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
          access(candidate.c_str(), X_OK) == 0) {
        return candidate;
      }
    }
    return NotInstalled("executable not found in $PATH");
  }

  std::string ExecInfo() const {
    Json spec = Json::object();
    spec["interactive"] = false;
    if (config_.provide_cluster_info) {
      Json cluster = Json::object();
      cluster["server"] = cluster_.server;
      if (!cluster_.tls_server_name.empty()) cluster["tls-server-name"] = cluster_.tls_server_name;
      if (cluster_.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
      if (!cluster_.certificate_authority_data_base64.empty()) {
        cluster["certificate-authority-data"] = cluster_.certificate_authority_data_base64;
      }
      if (!cluster_.proxy_url.empty()) cluster["proxy-url"] = cluster_.proxy_url;
      spec["cluster"] = std::move(cluster);
    }
    Json info = Json::object();
    info["apiVersion"] = config_.api_version;
    info["kind"] = "ExecCredential";
    info["spec"] = std::move(spec);
    return info.dump();
  }

  std::vector<std::string> Environment() const {
    std::vector<std::string> env;
    std::map<std::string, size_t, std::less<>> index;
    auto set = [&](absl::string_view name, absl::string_view value) {
      std::string entry = absl::StrCat(name, "=", value);
      auto it = index.find(name);
      if (it != index.end()) {
        env[it->second] = std::move(entry);
      } else {
        index.emplace(std::string(name), env.size());
        env.push_back(std::move(entry));
      }
    };
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      absl::string_view entry(*e);
      size_t eq = entry.find('=');
      if (eq == absl::string_view::npos || eq == 0) continue;
      set(entry.substr(0, eq), entry.substr(eq + 1));
    }
    for (const auto& [name, value] : config_.env) set(name, value);
    set("KUBERNETES_EXEC_INFO", ExecInfo());
    return env;
  }

  absl::StatusOr<Credential> Run() const {
    if (config_.api_version != kExecV1 && config_.api_version != kExecV1beta1) {
      return absl::InvalidArgumentError(absl::StrCat(Prefix(), "apiVersion \"", config_.api_version,
                                                     "\" is not supported (want ", kExecV1, " or ",
                                                     kExecV1beta1, ")"));
    }
    if (config_.interactive_mode == "Always") {
      return absl::FailedPreconditionError(
          absl::StrCat(Prefix(),
                       "exec plugin requires interactive mode (interactiveMode: Always), "
                       "but this daemon has no terminal"));
    }
    if (!config_.interactive_mode.empty() && config_.interactive_mode != "Never" &&
        config_.interactive_mode != "IfAvailable") {
      return absl::InvalidArgumentError(
          absl::StrCat(Prefix(), "invalid interactiveMode \"", config_.interactive_mode, "\""));
    }
    absl::StatusOr<std::string> executable = ResolveCommand();
    if (!executable.ok()) return executable.status();

    std::vector<std::string> argv = {config_.command};
    argv.insert(argv.end(), config_.args.begin(), config_.args.end());
    internal::ProcessLimits limits;
    limits.timeout = options_.timeout;
    absl::StatusOr<internal::ProcessResult> ran =
        internal::RunProcess(*executable, argv, Environment(), limits);
    if (!ran.ok()) {
      if (absl::IsNotFound(ran.status())) return NotInstalled(ran.status().message());
      return absl::Status(ran.status().code(), absl::StrCat(Prefix(), ran.status().message()));
    }
    if (!ran->exited) {
      return absl::UnavailableError(
          WithStderr(absl::StrCat(Prefix(), "killed by signal ", ran->signal), ran->err));
    }
    if (ran->exit_code != 0) {
      return absl::UnavailableError(
          WithStderr(absl::StrCat(Prefix(), "exited with code ", ran->exit_code), ran->err));
    }
    return Parse(ran->out, ran->err);
  }

  absl::StatusOr<Credential> Parse(const std::string& out, const std::string& err) const {
    auto invalid = [&](absl::string_view what) {
      return absl::InvalidArgumentError(WithStderr(absl::StrCat(Prefix(), what), err));
    };
    absl::StatusOr<Json> parsed = ParseJson(out);
    Json doc = parsed.ok() ? *std::move(parsed) : Json();
    if (!doc.is_object()) {
      return invalid(
          absl::StrCat("output (", out.size(), " bytes) is not an ExecCredential JSON object"));
    }
    absl::StatusOr<std::string> api_version = StringMember(doc, "apiVersion", "output: ");
    if (!api_version.ok()) return invalid(api_version.status().message());
    if (*api_version != config_.api_version) {
      return invalid(absl::StrCat("output has apiVersion \"", *api_version, "\", want \"",
                                  config_.api_version, "\""));
    }
    absl::StatusOr<std::string> kind = StringMember(doc, "kind", "output: ");
    if (!kind.ok()) return invalid(kind.status().message());
    if (*kind != "ExecCredential") {
      return invalid(absl::StrCat("output has kind \"", *kind, "\", want \"ExecCredential\""));
    }
    auto status = doc.find("status");
    if (status == doc.end() || !status->is_object()) return invalid("output has no status object");
    Credential credential;
    for (auto [key, field] : {std::pair{"token", &credential.bearer_token},
                              std::pair{"clientCertificateData", &credential.client_cert_pem},
                              std::pair{"clientKeyData", &credential.client_key_pem}}) {
      absl::StatusOr<std::string> value = StringMember(*status, key, "output: status.");
      if (!value.ok()) return invalid(value.status().message());
      *field = *std::move(value);
    }
    if (credential.client_cert_pem.empty() != credential.client_key_pem.empty()) {
      return invalid(
          "output has only one of status.clientCertificateData and "
          "status.clientKeyData");
    }
    if (credential.bearer_token.empty() && credential.client_cert_pem.empty()) {
      return invalid("output has neither status.token nor status.clientCertificateData");
    }
    absl::StatusOr<std::string> expiry =
        StringMember(*status, "expirationTimestamp", "output: status.");
    if (!expiry.ok()) return invalid(expiry.status().message());
    if (!expiry->empty()) {
      absl::Time when;
      std::string why;
      if (!absl::ParseTime(absl::RFC3339_full, *expiry, &when, &why)) {
        return invalid(absl::StrCat("output: status.expirationTimestamp \"", *expiry,
                                    "\" is not RFC 3339: ", why));
      }
      credential.expiry = when;
    }
    return credential;
  }

  const ExecConfig config_;
  const ExecClusterInfo cluster_;
  const ExecOptions options_;
  std::mutex mu_;
  std::optional<Credential> cached_;
  absl::Status last_error_;
  absl::Time failed_at_;
};

}  // namespace

std::shared_ptr<CredentialSource> StaticToken(std::string token) {
  return std::make_shared<StaticTokenSource>(std::move(token));
}

std::shared_ptr<CredentialSource> TokenFile(std::string path, absl::Duration reread_interval,
                                            Clock clock) {
  return std::make_shared<TokenFileSource>(std::move(path), reread_interval, std::move(clock));
}

std::shared_ptr<CredentialSource> ExecPlugin(ExecConfig config, ExecClusterInfo cluster,
                                             ExecOptions options) {
  return std::make_shared<ExecPluginSource>(std::move(config), std::move(cluster),
                                            std::move(options));
}

}  // namespace wm::kube
