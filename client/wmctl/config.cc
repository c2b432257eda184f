#include "client/wmctl/config.h"

#include "absl/strings/str_cat.h"
#include "server/common/file.h"
#include "server/common/json.h"
#include "server/common/yaml_json.h"

namespace wm::wmctl {
namespace {

std::string Env(const Getenv& getenv, const char* name) {
  const char* value = getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

bool IsOutputFormat(absl::string_view format) {
  return format == "table" || format == "wide" || format == "json" || format == "yaml";
}

ConfigLocation LocateConfig(const std::optional<std::string>& flag, const Getenv& getenv) {
  if (flag) return {*flag, !flag->empty()};
  if (std::string env = Env(getenv, kConfigEnv); !env.empty()) return {env, true};
  std::string base = Env(getenv, "XDG_CONFIG_HOME");
  if (base.empty()) {
    std::string home = Env(getenv, "HOME");
    if (home.empty()) return {};
    base = home + "/.config";
  }
  return {base + "/wmctl/config.yaml", false};
}

absl::StatusOr<FileSettings> ReadConfigFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return FileErrorAs(text.status(), "config file", path);
  auto documents = ParseYamlDocuments(*text);
  if (!documents.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, ": ", documents.status().message()));
  }
  FileSettings settings;
  if (documents->empty()) return settings;
  if (documents->size() > 1 || !documents->front().is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, ": must be one YAML mapping of settings"));
  }
  // Relative TLS paths are from the file's directory, so that a config file
  // and its certificates can move together.
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  auto bad = [&](const std::string& key, const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("config file ", path, ": key \"", key, "\" ", why));
  };
  auto text_value = [&](const std::string& key, const Json& value,
                        std::optional<std::string>& out) -> absl::Status {
    if (value.is_null()) return absl::OkStatus();  // "key:" with no value: unset
    if (!value.is_string() || value.get<std::string>().empty()) {
      return bad(key, "must be a non-empty string");
    }
    out = value.get<std::string>();
    return absl::OkStatus();
  };
  auto path_value = [&](const std::string& key, const Json& value,
                        std::optional<std::string>& out) -> absl::Status {
    if (absl::Status s = text_value(key, value, out); !s.ok()) return s;
    if (out && (*out)[0] != '/') out = dir + *out;
    return absl::OkStatus();
  };
  for (const auto& [key, value] : documents->front().items()) {
    absl::Status status;
    if (key == "address") {
      status = text_value(key, value, settings.address);
    } else if (key == "cluster") {
      status = text_value(key, value, settings.cluster);
    } else if (key == "namespace") {
      status = text_value(key, value, settings.namespace_);
    } else if (key == "token-file") {
      status = path_value(key, value, settings.token_file);
    } else if (key == "output") {
      status = text_value(key, value, settings.output);
      if (status.ok() && settings.output && !IsOutputFormat(*settings.output)) {
        status = bad(key, absl::StrCat("has an unknown output format \"", *settings.output,
                                       "\" (table, wide, json, yaml)"));
      }
    } else if (key == "tls") {
      if (value.is_null()) continue;
      if (!value.is_object()) {
        return bad(key, "must be a mapping of enabled, ca, cert, key, server-name");
      }
      for (const auto& [sub, sub_value] : value.items()) {
        std::string name = absl::StrCat("tls.", sub);
        if (sub == "enabled") {
          if (sub_value.is_null()) continue;
          if (!sub_value.is_boolean()) return bad(name, "must be true or false");
          settings.tls = sub_value.get<bool>();
        } else if (sub == "ca") {
          status = path_value(name, sub_value, settings.tls_ca);
        } else if (sub == "cert") {
          status = path_value(name, sub_value, settings.tls_cert);
        } else if (sub == "key") {
          status = path_value(name, sub_value, settings.tls_key);
        } else if (sub == "server-name") {
          status = text_value(name, sub_value, settings.tls_server_name);
        } else {
          return absl::InvalidArgumentError(
              absl::StrCat("config file ", path, ": unknown key \"", name, "\""));
        }
        if (!status.ok()) return status;
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("config file ", path, ": unknown key \"", key, "\""));
    }
    if (!status.ok()) return status;
  }
  return settings;
}

}  // namespace wm::wmctl
