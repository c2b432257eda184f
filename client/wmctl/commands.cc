#include "client/wmctl/commands.h"

#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "client/wmctl/definitions_view.h"
#include "client/wmctl/describe_view.h"
#include "server/common/yaml_json.h"
#include "server/definitions/registry.h"
#include "server/expressions/jq_engine.h"
#include "server/resolution/resolver.h"

namespace wm::wmctl {
namespace {

constexpr char kUsage[] = R"(wmctl - Workload Map resolution client

Usage:
  wmctl validate FILE|-                       check a definition file
  wmctl describe -f FILE|- [flags]            resolve a manifest offline
  wmctl definitions [NAME] [flags]            list the known definitions
  wmctl version

Flags:
  --definitions PATH     add definitions from a file or directory (repeatable)
  --no-catalog           do not load the built-in catalog
  -o, --output FORMAT    table (default), json or yaml
  --pod-limit N          pods shown per component, unhealthy first (0 = all)
  --component-limit N    components shown (describe: 0 = all; definitions: 3)

A describe file may hold, after the workload, its pods and the objects
between them (Jobs, ReplicaSets): they are attributed as in a cluster.

Exit codes: 0 ok, 1 error or invalid, 2 usage, 3 not found, 4 no definition
covers the type.
)";

struct Args {
  std::vector<std::string> positional;
  std::vector<std::string> definitions;
  std::string output = "table";
  std::string file;
  int pod_limit = 0;
  int component_limit = -1;
  bool no_catalog = false;
};

// Parses flags anywhere among the arguments ("--flag value" or
// "--flag=value"). Returns an error message for a bad flag.
std::string ParseArgs(const std::vector<std::string>& argv, Args& args) {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (absl::StartsWith(arg, "--") && arg.find('=') != std::string::npos) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      has_value = true;
    }
    auto take = [&](std::string& out) -> bool {
      if (has_value) {
        out = value;
        return true;
      }
      if (i + 1 >= argv.size()) return false;
      out = argv[++i];
      return true;
    };
    auto take_int = [&](int& out) -> bool {
      std::string s;
      return take(s) && absl::SimpleAtoi(s, &out) && out >= 0;
    };
    if (arg == "--definitions") {
      std::string path;
      if (!take(path)) return "--definitions needs a path";
      args.definitions.push_back(path);
    } else if (arg == "-o" || arg == "--output") {
      if (!take(args.output)) return "--output needs a format";
      if (args.output != "table" && args.output != "json" && args.output != "yaml") {
        return absl::StrCat("unknown output format \"", args.output, "\" (table, json, yaml)");
      }
    } else if (arg == "-f" || arg == "--filename") {
      if (!take(args.file)) return "-f needs a file";
    } else if (arg == "--pod-limit") {
      if (!take_int(args.pod_limit)) return "--pod-limit needs a number >= 0";
    } else if (arg == "--component-limit") {
      if (!take_int(args.component_limit)) return "--component-limit needs a number >= 0";
    } else if (arg == "--no-catalog") {
      args.no_catalog = true;
    } else if (absl::StartsWith(arg, "-") && arg != "-") {
      return absl::StrCat("unknown flag ", arg);
    } else {
      args.positional.push_back(arg);
    }
  }
  return "";
}

absl::StatusOr<std::string> ReadInput(const std::string& path, std::istream& in) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(in), {});
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  return std::string(std::istreambuf_iterator<char>(file), {});
}

class Wmctl {
 public:
  Wmctl(std::istream& in, std::ostream& out, std::ostream& err) : in_(in), out_(out), err_(err) {}

  int Run(const std::vector<std::string>& argv) {
    if (argv.empty() || argv[0] == "help" || argv[0] == "--help" || argv[0] == "-h") {
      (argv.empty() ? err_ : out_) << kUsage;
      return argv.empty() ? 2 : 0;
    }
    std::string command = argv[0];
    std::string bad = ParseArgs({argv.begin() + 1, argv.end()}, args_);
    if (!bad.empty()) return Usage(bad);
    if (command == "version") {
      out_ << "wmctl " << WM_VERSION << "\n";
      return 0;
    }
    if (command == "validate") return Validate();
    if (command == "describe") return Describe();
    if (command == "definitions") return Definitions();
    return Usage(absl::StrCat("unknown command \"", command, "\""));
  }

 private:
  int Usage(const std::string& message) {
    err_ << "error: " << message << "\nRun 'wmctl help' for usage.\n";
    return 2;
  }

  int Fail(int code, const std::string& message) {
    err_ << "error: " << message << "\n";
    return code;
  }

  absl::StatusOr<expressions::Engine*> Engine() {
    if (!engine_) {
      auto engine = expressions::NewJqEngine({.workers = 1});
      if (!engine.ok()) return engine.status();
      engine_ = *std::move(engine);
    }
    return engine_.get();
  }

  // Loads the catalog (unless --no-catalog) and every --definitions path.
  absl::StatusOr<definitions::Registry*> LoadRegistry() {
    auto engine = Engine();
    if (!engine.ok()) return engine.status();
    registry_ = std::make_unique<definitions::Registry>(**engine);
    if (!args_.no_catalog) {
      absl::Status s = registry_->AddDocuments(BuiltinCatalog(), definitions::Origin::kCatalog);
      if (!s.ok()) return s;
    }
    for (const std::string& path : args_.definitions) {
      absl::Status s = registry_->AddPath(path);
      if (!s.ok()) return s;
    }
    for (const auto& r : registry_->rejected()) {
      err_ << "warning: definition " << (r.name.empty() ? r.source : r.name) << " (" << r.source
           << ") is invalid and was skipped:\n";
      for (const auto& f : r.findings) {
        if (f.is_error()) err_ << "  " << f.ToString() << "\n";
      }
    }
    return registry_.get();
  }

  void Print(const Json& value) {
    if (args_.output == "yaml") {
      out_ << ToYaml(value);
    } else {
      out_ << value.dump(2) << "\n";
    }
  }

  int Validate() {
    if (args_.positional.size() != 1) return Usage("validate takes one FILE or -");
    const std::string& path = args_.positional[0];
    if (args_.output != "table") return Usage("validate does not take -o");
    auto text = ReadInput(path, in_);
    if (!text.ok()) return Fail(2, std::string(text.status().message()));
    auto docs = ParseYamlDocuments(*text);
    std::string name = path == "-" ? "stdin" : path;
    if (!docs.ok()) return Fail(2, absl::StrCat(name, ": ", docs.status().message()));
    if (docs->empty()) return Fail(2, absl::StrCat(name, ": no document"));
    auto engine = Engine();
    if (!engine.ok()) return Fail(1, std::string(engine.status().message()));
    int exit_code = 0;
    for (size_t i = 0; i < docs->size(); ++i) {
      std::string source = docs->size() > 1 ? absl::StrCat(name, "#", i + 1) : name;
      auto parsed = definitions::ParseDefinition((*docs)[i], definitions::Origin::kFile, source);
      std::vector<Finding> findings = parsed.findings;
      std::string gvk;
      if (parsed.definition) {
        if (const auto& k = parsed.definition->root.kind) {
          gvk =
              absl::StrCat(k->group.empty() ? "" : k->group + "/", k->version, ", Kind=", k->kind);
        }
        std::vector<Finding> compile_findings;
        auto compiled =
            definitions::CompileDefinition(*parsed.definition, **engine, &compile_findings);
        findings.insert(findings.end(), compile_findings.begin(), compile_findings.end());
      }
      int errors = 0;
      for (const auto& f : findings) errors += f.is_error();
      if (errors == 0) {
        out_ << "OK: " << source << " is a valid Karta definition (GVK: " << gvk << ")\n";
      } else {
        out_ << "INVALID: " << source << "\n";
        for (const auto& f : findings) {
          if (f.is_error()) out_ << "  " << f.ToString() << "\n";
        }
        err_ << "error: " << errors << " finding(s) in " << source << "\n";
        exit_code = 1;
      }
      for (const auto& f : findings) {
        if (!f.is_error()) err_ << f.ToString() << "\n";
      }
    }
    return exit_code;
  }

  int Describe() {
    if (args_.file.empty()) {
      return Usage(
          "describe needs -f FILE (live describe through the daemon is not available yet)");
    }
    if (!args_.positional.empty()) return Usage("describe -f takes no TYPE or NAME");
    auto text = ReadInput(args_.file, in_);
    if (!text.ok()) return Fail(2, std::string(text.status().message()));
    auto docs = ParseYamlDocuments(*text);
    if (!docs.ok()) return Fail(2, std::string(docs.status().message()));
    if (docs->empty()) return Fail(2, "the file holds no object");
    for (const Json& d : *docs) {
      if (!d.is_object() || !d.contains("apiVersion") || !d.contains("kind")) {
        return Fail(2, "every object needs apiVersion and kind");
      }
    }
    auto registry = LoadRegistry();
    if (!registry.ok()) return Fail(1, std::string(registry.status().message()));
    // The workload: the first object that is not a Pod, else the first.
    size_t workload = 0;
    for (size_t i = 0; i < docs->size(); ++i) {
      if ((*docs)[i]["kind"] != "Pod") {
        workload = i;
        break;
      }
    }
    const Json& object = (*docs)[workload];
    std::string api_version = object["apiVersion"];
    definitions::GroupVersionKind gvk;
    size_t slash = api_version.find('/');
    gvk.group = slash == std::string::npos ? "" : api_version.substr(0, slash);
    gvk.version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
    gvk.kind = object["kind"];
    auto def = (*registry)->ForKind(gvk);
    if (!def.ok()) {
      if (absl::IsNotFound(def.status())) {
        if (args_.output != "table") {
          Print({{"error", "no_definition_for_type"},
                 {"gvk", gvk.ToString()},
                 {"message", "no Karta definition covers this workload type"},
                 {"hint", "add one with --definitions PATH"}});
        }
        return Fail(4, std::string(def.status().message()));
      }
      return Fail(2, std::string(def.status().message()));
    }
    resolution::WorkloadInput input{&object};
    for (size_t i = 0; i < docs->size(); ++i) {
      if (i == workload) continue;
      ((*docs)[i]["kind"] == "Pod" ? input.pods : input.owners).push_back(&(*docs)[i]);
    }
    auto engine = Engine();
    auto resolved = resolution::ResolveWorkload(**def, **engine, input);
    if (!resolved.ok()) return Fail(1, std::string(resolved.status().message()));
    DescribeOptions options;
    options.file_mode = true;
    options.has_pods = !input.pods.empty();
    options.pod_limit = args_.pod_limit;
    options.component_limit = std::max(0, args_.component_limit);
    if (args_.output == "table") {
      out_ << DescribeText(*resolved, options);
    } else {
      Print(DescribeJson(*resolved, options));
    }
    for (const auto& w : resolved->warnings()) err_ << "warning: " << w << "\n";
    return 0;
  }

  int Definitions() {
    if (args_.positional.size() > 1) return Usage("definitions takes at most one NAME");
    auto registry = LoadRegistry();
    if (!registry.ok()) return Fail(1, std::string(registry.status().message()));
    auto all = (*registry)->All();
    if (!args_.positional.empty()) {
      // Prefer the copy of the latest origin (cluster over file over catalog).
      std::shared_ptr<const definitions::Definition> found;
      for (const auto& d : all) {
        if (d->name == args_.positional[0] && (!found || d->origin > found->origin)) found = d;
      }
      if (!found) return Fail(3, absl::StrCat("definition ", args_.positional[0], " not found"));
      if (args_.output == "table") {
        out_ << DefinitionsTable({found}, args_.component_limit < 0 ? 3 : args_.component_limit);
      } else {
        Print(found->object);
      }
      return 0;
    }
    if (all.empty()) {
      err_ << "No Karta definitions found.\n";
      return 0;
    }
    if (args_.output == "table") {
      out_ << DefinitionsTable(all, args_.component_limit < 0 ? 3 : args_.component_limit);
    } else {
      Json items = Json::array();
      for (const auto& d : all) items.push_back(d->object);
      Print({{"items", items}, {"count", items.size()}});
    }
    return 0;
  }

  std::istream& in_;
  std::ostream& out_;
  std::ostream& err_;
  Args args_;
  std::unique_ptr<expressions::Engine> engine_;
  std::unique_ptr<definitions::Registry> registry_;
};

}  // namespace

int RunWmctl(const std::vector<std::string>& argv, std::istream& in, std::ostream& out,
             std::ostream& err) {
  return Wmctl(in, out, err).Run(argv);
}

}  // namespace wm::wmctl
