#include "client/wmctl/commands.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "catalog/catalog.h"
#include "client/wmctl/definitions_view.h"
#include "client/wmctl/describe_view.h"
#include "client/wmctl/live_client.h"
#include "client/wmctl/live_view.h"
#include "server/common/yaml_json.h"
#include "server/definitions/registry.h"
#include "server/expressions/jq_engine.h"
#include "server/resolution/resolver.h"

namespace wm::wmctl {
namespace {

constexpr char kUsage[] = R"(wmctl - Workload Map resolution client

Usage:
  wmctl get [TYPE[/NAME]] [flags]             list workloads (from the daemon)
  wmctl describe TYPE/NAME [flags]            show one workload (from the daemon)
  wmctl describe -f FILE|- [flags]            resolve a manifest offline
  wmctl gang POD [flags]                      show a pod's pod group (from the daemon)
  wmctl validate FILE|-                       check a definition file
  wmctl definitions [NAME] [flags]            list the known definitions
  wmctl version

Daemon flags (get, describe TYPE/NAME, gang):
  --address ADDR         workloadmapd at HOST:PORT or unix:PATH (default
                         $WM_ADDRESS, else 127.0.0.1:50051); plaintext
  --cluster NAME         a cluster (kubeconfig context) of the daemon
  -n, --namespace NS     namespace (default "default")
  -A, --all-namespaces   get: every namespace
  -l, --selector SEL     get: label selector on the workload object
  --phase STATUS         get: keep workloads with this matched status
                         (Running, Failed, ...; repeatable or comma-separated)
  --all-types            get: every workload type (the default without TYPE)

Offline flags (validate, describe -f, definitions):
  --definitions PATH     add definitions from a file or directory (repeatable)
  --no-catalog           do not load the built-in catalog

Output flags:
  -o, --output FORMAT    table (default), json or yaml; get also takes wide
                         (adds CLUSTER and DEFINITION)
  --pod-limit N          pods shown per component, unhealthy first (0 = all)
  --component-limit N    components shown (describe: 0 = all; definitions: 3)

TYPE is a Kind (JobSet), a plural resource (jobsets), or either followed by
.GROUP (jobsets.jobset.x-k8s.io); "TYPE NAME" works as well as TYPE/NAME.

A describe file may hold, after the workload, its pods and the objects
between them (Jobs, ReplicaSets): they are attributed as in a cluster.

Exit codes: 0 ok, 1 error, invalid or daemon unreachable, 2 usage, 3 not
found, 4 no definition covers the type.
)";

struct Args {
  std::vector<std::string> positional;
  std::vector<std::string> definitions;
  std::string output = "table";
  std::string file;
  int pod_limit = 0;
  int component_limit = -1;
  bool no_catalog = false;
  // Daemon flags.
  std::string address;
  std::string cluster;
  std::string namespace_;
  std::string selector;
  std::vector<std::string> phases;
  bool all_namespaces = false;
  bool all_types = false;
  // The long names of the flags given (but -o), to reject them where they
  // do not apply.
  std::vector<std::string> given;
};

// "-n" -> "--namespace"; long names and positionals as they are.
std::string LongName(const std::string& arg) {
  if (arg == "-n") return "--namespace";
  if (arg == "-A") return "--all-namespaces";
  if (arg == "-l") return "--selector";
  if (arg == "-f") return "--filename";
  if (arg == "-o") return "--output";
  return arg;
}

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
    std::string name = LongName(arg);
    if (absl::StartsWith(name, "--") && name != "--output") args.given.push_back(name);
    if (arg == "--definitions") {
      std::string path;
      if (!take(path)) return "--definitions needs a path";
      args.definitions.push_back(path);
    } else if (arg == "-o" || arg == "--output") {
      if (!take(args.output)) return "--output needs a format";
      if (args.output != "table" && args.output != "wide" && args.output != "json" &&
          args.output != "yaml") {
        return absl::StrCat("unknown output format \"", args.output,
                            "\" (table, wide, json, yaml)");
      }
    } else if (arg == "--address") {
      if (!take(args.address) || args.address.empty()) return "--address needs HOST:PORT";
    } else if (arg == "--cluster") {
      if (!take(args.cluster) || args.cluster.empty()) return "--cluster needs a name";
    } else if (arg == "-n" || arg == "--namespace") {
      if (!take(args.namespace_) || args.namespace_.empty()) return "--namespace needs a name";
    } else if (arg == "-A" || arg == "--all-namespaces") {
      args.all_namespaces = true;
    } else if (arg == "-l" || arg == "--selector") {
      if (!take(args.selector)) return "--selector needs a label selector";
    } else if (arg == "--phase") {
      std::string phases;
      if (!take(phases)) return "--phase needs a status";
      for (absl::string_view p : absl::StrSplit(phases, ',', absl::SkipEmpty())) {
        args.phases.emplace_back(p);
      }
    } else if (arg == "--all-types") {
      args.all_types = true;
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
    if (args_.output == "wide" && command != "get" && command != "validate") {
      return Usage(absl::StrCat(command, " does not take -o wide"));
    }
    if (command == "get") return Get();
    if (command == "gang") return Gang();
    if (command == "describe" && args_.file.empty()) return LiveDescribe();
    if (command == "validate" || command == "describe" || command == "definitions") {
      std::string what = command == "describe" ? "describe -f" : command;
      for (const std::string& flag : args_.given) {
        if (IsDaemonFlag(flag)) {
          return Usage(absl::StrCat(what, " works offline and does not take ", flag));
        }
      }
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

  // ---- Daemon commands ----------------------------------------------------

  static bool IsDaemonFlag(const std::string& flag) {
    for (const char* f : {"--address", "--cluster", "--namespace", "--all-namespaces", "--selector",
                          "--phase", "--all-types"}) {
      if (flag == f) return true;
    }
    return false;
  }

  // A usage error (2) for a flag `command` does not take, else 0.
  int OnlyFlags(const std::string& command, std::initializer_list<absl::string_view> allowed) {
    for (const std::string& flag : args_.given) {
      if (std::find(allowed.begin(), allowed.end(), flag) == allowed.end()) {
        return Usage(absl::StrCat(command, " does not take ", flag));
      }
    }
    return 0;
  }

  // TYPE/NAME, or TYPE NAME; `name_required` makes a bare TYPE a usage error.
  // Returns an error message, empty on success.
  std::string TypeAndName(const std::string& command, bool name_required, std::string& type,
                          std::string& name) {
    const std::vector<std::string>& p = args_.positional;
    std::string form = name_required ? "TYPE/NAME" : "[TYPE[/NAME]]";
    if (p.size() > 2) return absl::StrCat(command, " takes ", form);
    if (p.size() == 2) {
      if (absl::StrContains(p[0], '/') || absl::StrContains(p[1], '/')) {
        return absl::StrCat(command, " takes TYPE/NAME or TYPE NAME");
      }
      type = p[0];
      name = p[1];
    } else if (p.size() == 1) {
      size_t slash = p[0].rfind('/');
      type = p[0].substr(0, slash);
      if (slash != std::string::npos) {
        name = p[0].substr(slash + 1);
        if (name.empty()) return absl::StrCat(command, ": \"", p[0], "\" has no NAME after /");
      }
    }
    if (type.empty() && !p.empty()) return absl::StrCat(command, ": TYPE is empty");
    if (name_required && name.empty()) return absl::StrCat(command, " needs ", form);
    return "";
  }

  // A Kind starts with an uppercase letter, else TYPE is a plural resource
  // (as the daemon matches them); ".GROUP" after either sets the group.
  static void SetType(const std::string& type, workloadmap::v1::ObjectRef* ref) {
    size_t dot = type.find('.');
    std::string head = type.substr(0, dot);
    if (dot != std::string::npos) ref->set_group(type.substr(dot + 1));
    if (absl::ascii_isupper(static_cast<unsigned char>(head[0]))) {
      ref->set_kind(head);
    } else {
      ref->set_resource(head);
    }
  }

  // The kinds filter of ListWorkloads: "Kind", "group/Kind", "resource" or
  // "resource.group".
  static std::string KindFilter(const std::string& type) {
    size_t dot = type.find('.');
    if (dot == std::string::npos || !absl::ascii_isupper(static_cast<unsigned char>(type[0]))) {
      return type;
    }
    return absl::StrCat(type.substr(dot + 1), "/", type.substr(0, dot));
  }

  // The daemon client, or a usage error (2) for a bad address.
  int Connect() {
    std::string address = DaemonAddress(args_.address);
    std::string bad = CheckAddress(address);
    if (!bad.empty()) return Usage(args_.address.empty() ? bad + " in WM_ADDRESS" : bad);
    client_ = std::make_unique<LiveClient>(address);
    return 0;
  }

  int CallFailed(const grpc::Status& status) {
    return Fail(ExitCodeFor(status), ErrorMessageFor(status, client_->address()));
  }

  int LiveDescribe() {
    if (int bad = OnlyFlags("describe TYPE/NAME", {"--address", "--cluster", "--namespace",
                                                   "--pod-limit", "--component-limit"})) {
      return bad;
    }
    if (args_.positional.empty()) return Usage("describe needs TYPE/NAME or -f FILE");
    std::string type, name;
    std::string bad = TypeAndName("describe", true, type, name);
    if (!bad.empty()) return Usage(bad);
    if (int code = Connect()) return code;
    workloadmap::v1::ResolveWorkloadRequest request;
    workloadmap::v1::ObjectRef* ref = request.mutable_ref();
    SetType(type, ref);
    ref->set_namespace_(args_.namespace_);
    ref->set_name(name);
    ref->set_cluster(args_.cluster);
    request.set_include_pods(true);
    // Every pod: --pod-limit is applied here, unhealthy first, so that the
    // "... and K more (U unhealthy shown)" line can count what it hides.
    request.set_pod_limit(0);
    workloadmap::v1::ResolveWorkloadResponse response;
    grpc::Status status = client_->ResolveWorkload(request, &response);
    if (!status.ok()) {
      if (ExitCodeFor(status) == 4 && args_.output != "table") {
        Print({{"error", "no_definition_for_type"},
               {"type", type},
               {"message", "no Karta definition covers this workload type"},
               {"hint",
                "give the daemon one with --definitions PATH, or add a Karta to the "
                "cluster"}});
      }
      return CallFailed(status);
    }
    DescribeOptions options;
    options.file_mode = false;
    options.has_pods = true;
    options.pod_limit = args_.pod_limit;
    options.component_limit = std::max(0, args_.component_limit);
    if (args_.output == "table") {
      out_ << DescribeText(response.workload(), options);
    } else {
      Print(DescribeJson(response.workload(), options));
    }
    for (const auto& w : response.workload().warnings()) err_ << "warning: " << w << "\n";
    return 0;
  }

  int Get() {
    if (int bad = OnlyFlags("get", {"--address", "--cluster", "--namespace", "--all-namespaces",
                                    "--selector", "--phase", "--all-types"})) {
      return bad;
    }
    std::string type, name;
    std::string bad = TypeAndName("get", false, type, name);
    if (!bad.empty()) return Usage(bad);
    if (args_.all_namespaces && !args_.namespace_.empty()) {
      return Usage("get takes -n NAMESPACE or -A, not both");
    }
    if (args_.all_types && !type.empty()) return Usage("get takes TYPE or --all-types, not both");
    if (!name.empty() && !args_.selector.empty()) return Usage("get takes NAME or -l, not both");
    if (int code = Connect()) return code;
    std::string namespace_ = args_.namespace_.empty() ? "default" : args_.namespace_;
    workloadmap::v1::ListWorkloadsRequest request;
    request.set_cluster(args_.cluster);
    if (!args_.all_namespaces) request.set_namespace_(namespace_);
    if (!type.empty()) request.add_kinds(KindFilter(type));
    for (const std::string& phase : args_.phases) request.add_statuses(phase);
    request.set_label_selector(args_.selector);
    std::vector<workloadmap::v1::WorkloadSummary> rows;
    grpc::Status status = client_->ListAllWorkloads(request, &rows);
    if (!status.ok()) return CallFailed(status);
    std::string where =
        args_.all_namespaces ? "in any namespace" : absl::StrCat("in namespace ", namespace_);
    if (!name.empty()) {
      rows.erase(std::remove_if(rows.begin(), rows.end(),
                                [&](const auto& row) { return row.ref().name() != name; }),
                 rows.end());
      if (rows.empty()) return Fail(3, absl::StrCat(type, " ", name, " not found ", where));
    }
    if (args_.output == "json" || args_.output == "yaml") {
      Json items = Json::array();
      for (const auto& row : rows) items.push_back(GetRowJson(row));
      Print(items);
    } else if (rows.empty()) {
      err_ << "No workloads found " << where << ".\n";
    } else {
      out_ << GetTable(rows,
                       {.all_namespaces = args_.all_namespaces, .wide = args_.output == "wide"});
    }
    for (const auto& row : rows) {
      if (!row.error().empty()) {
        err_ << "warning: " << row.ref().kind() << " " << row.ref().namespace_() << "/"
             << row.ref().name() << ": " << row.error() << "\n";
      }
    }
    return 0;
  }

  int Gang() {
    if (int bad = OnlyFlags("gang", {"--address", "--cluster", "--namespace"})) return bad;
    if (args_.positional.size() != 1) return Usage("gang takes one POD");
    std::string pod = args_.positional[0];
    for (const char* prefix : {"pod/", "pods/", "Pod/"}) {
      if (absl::StartsWith(pod, prefix)) pod = pod.substr(strlen(prefix));
    }
    if (pod.empty() || absl::StrContains(pod, '/')) return Usage("gang takes one POD");
    if (int code = Connect()) return code;
    workloadmap::v1::GetGangInstructionsRequest request;
    request.mutable_pod()->set_cluster(args_.cluster);
    request.mutable_pod()->set_namespace_(args_.namespace_);
    request.mutable_pod()->set_name(pod);
    workloadmap::v1::GetGangInstructionsResponse response;
    grpc::Status status = client_->GetGangInstructions(request, &response);
    if (!status.ok()) return CallFailed(status);
    std::string namespace_ = args_.namespace_.empty() ? "default" : args_.namespace_;
    if (args_.output == "table") {
      out_ << GangText(namespace_, pod, response);
    } else {
      Print(GangJson(namespace_, pod, response));
    }
    if (!response.assignment().error().empty()) {
      return Fail(1,
                  absl::StrCat("pod ", pod, " has no pod group: ", response.assignment().error()));
    }
    return 0;
  }

  std::istream& in_;
  std::ostream& out_;
  std::ostream& err_;
  Args args_;
  std::unique_ptr<expressions::Engine> engine_;
  std::unique_ptr<definitions::Registry> registry_;
  std::unique_ptr<LiveClient> client_;
};

}  // namespace

int RunWmctl(const std::vector<std::string>& argv, std::istream& in, std::ostream& out,
             std::ostream& err) {
  return Wmctl(in, out, err).Run(argv);
}

}  // namespace wm::wmctl
