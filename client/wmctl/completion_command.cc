// `wmctl completion SHELL` and `wmctl __complete` (completion.h).
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/wmctl/completion.h"
#include "client/wmctl/engine_factory.h"
#include "client/wmctl/invocation.h"

namespace wm::wmctl {

namespace v1 = ::workloadmap::v1;

int Invocation::Completion() {
  if (!args_.order.empty()) {
    return Usage(absl::StrCat("completion does not take ", args_.order[0]));
  }
  if (args_.positional.size() != 1) return Usage("completion takes bash, zsh or fish");
  std::string script = CompletionScript(args_.positional[0]);
  if (script.empty()) {
    return Usage(
        absl::StrCat("no completion for \"", args_.positional[0], "\" (bash, zsh or fish)"));
  }
  out_ << script;
  return 0;
}

int Invocation::Complete(std::vector<std::string> words) {
  std::string current = words.empty() ? "" : words.back();
  if (!words.empty()) words.pop_back();
  // The words before, as far as they parse: a half-typed line still says
  // which daemon, namespace and command.
  (void)ParseArgs(words, args_);
  std::string command = args_.positional.empty() ? "" : args_.positional[0];
  spec_ = FindCommand(command);
  // The value of a flag: "--flag VALUE" or "--flag=VALUE".
  const FlagSpec* flag = words.empty() ? nullptr : FindFlag(words.back());
  if (flag != nullptr && flag->value == FlagValue::kNone) flag = nullptr;
  std::string prefix;  // "--flag=", put back before each candidate
  std::string word = current;
  if (flag == nullptr && absl::StartsWith(current, "--") && absl::StrContains(current, '=')) {
    flag = FindFlag(current.substr(0, current.find('=')));
    if (flag == nullptr || flag->value == FlagValue::kNone) return 0;
    prefix = current.substr(0, current.find('=') + 1);
    word = current.substr(prefix.size());
  }
  std::vector<std::string> candidates;
  if (flag != nullptr) {
    if (flag->value == FlagValue::kPath) return kCompleteFilesExit;
    candidates = FlagValues(*flag, word);
  } else if (absl::StartsWith(current, "-")) {
    if (spec_ == nullptr) {
      candidates = {"--help", "--version"};
    } else {
      for (absl::string_view f : spec_->flags) candidates.emplace_back(f);
      candidates.push_back("--help");
    }
  } else if (spec_ == nullptr) {
    if (command.empty()) {
      for (const CommandSpec& c : AllCommands()) {
        // "definitions apply" is completed as definitions' first word.
        if (c.name.find(' ') == absl::string_view::npos) candidates.emplace_back(c.name);
      }
    }
  } else {
    size_t position = args_.positional.size() - 1;
    if (command == "validate" && position == 0) return kCompleteFilesExit;
    candidates = Positionals(command, position, word);
  }
  for (const std::string& c : candidates) {
    if (absl::StartsWith(c, word)) out_ << prefix << c << "\n";
  }
  return 0;
}

std::vector<std::string> Invocation::FlagValues(const FlagSpec& flag, const std::string& word) {
  switch (flag.value) {
    case FlagValue::kFormat: {
      std::vector<std::string> out;
      if (spec_ == nullptr) return {"table", "wide", "json", "yaml"};
      for (absl::string_view f : spec_->formats) out.emplace_back(f);
      return out;
    }
    case FlagValue::kPhase: {
      // Comma-separated: complete the last status.
      size_t comma = word.rfind(',');
      std::string done = comma == std::string::npos ? "" : word.substr(0, comma + 1);
      std::vector<std::string> out;
      for (int s = 0; s < definitions::kMappedStatusCount; ++s) {
        out.push_back(done + definitions::StatusName(static_cast<definitions::WorkloadStatus>(s)));
      }
      out.push_back(done + "Undefined");
      return out;
    }
    case FlagValue::kNamespace:
    case FlagValue::kCluster: {
      std::set<std::string> values;
      for (const auto& row : ListForCompletion("", false)) {
        values.insert(flag.value == FlagValue::kNamespace ? row.ref().namespace_()
                                                          : row.ref().cluster());
      }
      values.erase("");
      return {values.begin(), values.end()};
    }
    case FlagValue::kEngine:
      return {EngineNames().begin(), EngineNames().end()};
    case FlagValue::kContext: {
      if (LoadSettings(true) != 0) return {};
      kube::KubeconfigOptions options;
      if (!settings_.kube.kubeconfig.empty()) options.paths = {settings_.kube.kubeconfig};
      options.getenv = settings_.kube.getenv;
      auto contexts = kube::KubeconfigContexts(options);
      if (!contexts.ok()) return {};
      return *std::move(contexts);
    }
    default:
      return {};
  }
}

std::vector<std::string> Invocation::Positionals(const std::string& command, size_t position,
                                                 const std::string& word) {
  std::set<std::string> out;
  if (command == "completion" && position == 0) return {"bash", "fish", "zsh"};
  if (command == "definitions" && position == 0) {
    out.insert("apply");
    for (const DefinitionRow& row : DefinitionsForCompletion()) out.insert(row.name);
    return {out.begin(), out.end()};
  }
  if (command != "get" && (command != "describe" || args_.Has("--filename"))) return {};
  bool in_namespace = !args_.Has("--all-namespaces");
  size_t slash = word.find('/');
  if (position == 0 && slash == std::string::npos) {
    // TYPE: the kinds of the daemon's definitions.
    for (const DefinitionRow& row : DefinitionsForCompletion()) {
      if (!row.kind.empty()) out.insert(row.kind);
    }
  } else if (position == 0) {
    // TYPE/NAME.
    std::string type = word.substr(0, slash);
    for (const auto& row : ListForCompletion(type, in_namespace)) {
      out.insert(absl::StrCat(type, "/", row.ref().name()));
    }
  } else if (position == 1 && !absl::StrContains(args_.positional[1], '/')) {
    // TYPE NAME.
    for (const auto& row : ListForCompletion(args_.positional[1], in_namespace)) {
      out.insert(row.ref().name());
    }
  }
  return {out.begin(), out.end()};
}

bool Invocation::ConnectQuietly(bool all_namespaces) {
  if (client_) return true;
  if (LoadSettings(true) != 0 || !ConnectionProblem().empty()) return false;
  if (settings_.mode == Mode::kKubeconfig) return ConnectToCluster(all_namespaces, true) == 0;
  settings_.connection.deadline = kCompletionDeadline;
  auto client = LiveClient::Create(settings_.connection);
  if (!client.ok()) return false;
  client_ = *std::move(client);
  return true;
}

std::vector<v1::WorkloadSummary> Invocation::ListForCompletion(const std::string& type,
                                                               bool in_namespace) {
  std::vector<v1::WorkloadSummary> rows;
  if (!ConnectQuietly(!in_namespace)) return rows;
  v1::ListWorkloadsRequest request;
  request.set_cluster(settings_.cluster);
  if (in_namespace) request.set_namespace_(settings_.namespace_);
  if (!type.empty()) request.add_kinds(KindFilter(type));
  if (!client_->ListAllWorkloads(request, &rows).ok()) rows.clear();
  return rows;
}

std::vector<DefinitionRow> Invocation::DefinitionsForCompletion() {
  std::vector<DefinitionRow> rows;
  if (Offline()) {
    if (!LoadRegistry().ok()) return rows;
    for (const auto& d : registry_->All()) {
      rows.push_back({d->name, "", "", d->root.kind ? d->root.kind->kind : "", "", {}, {}});
    }
    return rows;
  }
  if (!ConnectQuietly(false)) return rows;
  v1::ListDefinitionsResponse response;
  if (!client_->ListDefinitions({}, &response).ok()) return rows;
  for (const v1::DefinitionInfo& d : response.definitions()) {
    rows.push_back({d.name(), "", "", d.root_kind().kind(), "", {}, {}});
  }
  return rows;
}

}  // namespace wm::wmctl
