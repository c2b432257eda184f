#ifndef WM_CLIENT_WMCTL_INVOCATION_H_
#define WM_CLIENT_WMCTL_INVOCATION_H_

#include <istream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/wmctl/cluster_session.h"
#include "client/wmctl/commands.h"
#include "client/wmctl/definitions_view.h"
#include "client/wmctl/describe_view.h"
#include "client/wmctl/errors.h"
#include "client/wmctl/flags.h"
#include "client/wmctl/live_client.h"
#include "client/wmctl/settings.h"
#include "client/wmctl/validate_command.h"
#include "server/common/json.h"
#include "server/definitions/registry.h"
#include "server/expressions/engine.h"
#include "server/kube/auth/kubeconfig.h"
#include "workloadmap/v1/service.pb.h"

namespace wm::wmctl {

// Completion asks the daemon with a short deadline: a TAB must not hang.
inline constexpr absl::Duration kCompletionDeadline = absl::Seconds(2);

// One run of wmctl (RunWmctl): its streams, arguments and settings, and
// what its commands share: the connection to a daemon or to a cluster, the
// engine and the definitions. The members are defined by concern, one file
// each:
//   commands.cc              Run: which command runs, its flags checked
//   settings.cc              the settings: flags, environment, config file
//   invocation.cc            connecting, definitions, printing
//   version_command.cc       version
//   workload_commands.cc     get, describe TYPE/NAME, gang
//   describe_file_command.cc describe -f
//   definitions_commands.cc  definitions, definitions apply
//   validate_command.cc      validate
//   completion_command.cc    completion and __complete
// (eval is a function of its own, eval_command.h: it shares nothing.)
class Invocation {
 public:
  Invocation(std::istream& in, std::ostream& out, std::ostream& err, const Environment& environment)
      : in_(in), out_(out), err_(err), env_(environment) {}

  // RunWmctl's contract (commands.h).
  int Run(const std::vector<std::string>& argv);

 private:
  int Usage(const std::string& message) { return UsageError(err_, message); }
  int Fail(int code, const std::string& message) { return wmctl::Fail(err_, code, message); }

  // definitions and validate work in-process with --offline, --definitions
  // or --no-catalog.
  bool Offline() const {
    return args_.Has("--offline") || args_.Has("--definitions") || args_.Has("--no-catalog");
  }

  std::string Env(const char* name) const {
    const char* value = env_.getenv(name);
    return value == nullptr ? "" : value;
  }

  // ---- commands.cc

  // A usage error (2) for a flag the command, or its form, does not take.
  int CheckFlags(const std::string& command);

  // ---- settings.cc

  // Fills settings_ from flags, environment, config file and defaults.
  // Returns an exit code (2) after printing the error, unless `quiet`.
  int LoadSettings(bool quiet);

  // A usage error (2) for a flag of the other mode, or one the mode does
  // not take.
  int CheckModeFlags(const std::string& command);

  // Why the connection settings cannot work, or "". Checked only by the
  // commands that connect: a bad WM_ADDRESS does not stop offline ones.
  std::string ConnectionProblem() const;

  // ---- invocation.cc

  // The engine of describe -f, definitions and validate offline, made on
  // first use: the daemon's default (native).
  absl::StatusOr<expressions::Engine*> Engine();

  // Loads the catalog (unless --no-catalog) and every --definitions path.
  absl::StatusOr<definitions::Registry*> LoadRegistry();

  // The definitions LoadRegistry rejected, with their errors.
  // REQUIRES: LoadRegistry() succeeded.
  std::vector<RejectedRow> RegistryRejected() const;

  // -o json or yaml of `value` on out_.
  void Print(const Json& value);

  // -o json and yaml of get, describe TYPE/NAME and gang name the mode that
  // answered.
  Json WithMode(Json view) const;

  // The client of the daemon, or of the in-process service over the
  // cluster in kubeconfig mode (listing `all_namespaces` or the namespace);
  // an exit code after printing the error.
  int Connect(bool all_namespaces = false);

  // The connection of kubeconfig mode, with the namespace defaulted to the
  // context's; an exit code (2) after printing the error unless `quiet`.
  int LoadKubeconfig(bool quiet);

  // Kubeconfig mode: the daemon's libraries over the context, in-process.
  int ConnectToCluster(bool all_namespaces, bool quiet);

  // Kubeconfig mode's base definitions: the catalog (unless --no-catalog)
  // and every --definitions path, as the daemon's. Called again whenever
  // the cluster's Karta objects change (on a cache thread).
  absl::Status LoadBase(definitions::Registry& registry);

  // After a kubeconfig-mode answer: what it lacks, and the --definitions
  // that were rejected.
  void PrintSessionWarnings();

  // A failed call's message and exit code (errors.h).
  int CallFailed(const grpc::Status& status);

  // ---- version_command.cc

  // `wmctl version`: the build and which mode would answer.
  int Version();

  // ---- workload_commands.cc

  // TYPE/NAME, or TYPE NAME; `name_required` makes a bare TYPE a usage error.
  // Returns an error message, empty on success.
  std::string TypeAndName(const std::string& command, bool name_required, std::string& type,
                          std::string& name);

  // The kinds filter of ListWorkloads: "Kind", "group/Kind", "resource" or
  // "resource.group".
  static std::string KindFilter(const std::string& type);

  // `wmctl get`, `describe TYPE/NAME` and `gang POD`: exit codes as
  // RunWmctl's.
  int Get();
  int LiveDescribe();
  int Gang();

  // What describe prints, from --pod-limit and --component-limit.
  DescribeOptions Options(bool file_mode, bool has_pods);

  // ---- describe_file_command.cc

  // `wmctl describe -f FILE|-`: resolves the file's objects in-process.
  int Describe();

  // ---- definitions_commands.cc

  // --group, --kind and --version: an error message, or "".
  std::string CheckKindFilter() const;

  // Whether --group, --kind and --version keep `row`.
  bool KindFilterKeeps(const DefinitionRow& row) const;

  // Prints the rows (filtered; one NAME if given) and then the warnings.
  int PrintDefinitions(std::vector<DefinitionRow> rows, const std::vector<RejectedRow>& rejected);

  // Always over the kubeconfig's context: a write made as the user.
  int DefinitionsApply();

  // `wmctl definitions`: the daemon's (or the cluster's in kubeconfig
  // mode), or with --offline the catalog's and --definitions'.
  int Definitions();
  int OfflineDefinitions();

  // ---- validate_command.cc

  // One document's findings: from the daemon, or in-process with --offline.
  absl::StatusOr<std::vector<workloadmap::v1::Finding>> Findings(const DefinitionDocument& document,
                                                                 int& exit_code);

  // `wmctl validate FILE|-`.
  int Validate();

  // ---- completion_command.cc

  // `wmctl completion SHELL`: the script.
  int Completion();

  // `wmctl __complete WORD... CURRENT` (see completion.h).
  int Complete(std::vector<std::string> words);

  // Candidates for the value of `flag`; `word` is what is typed of it.
  std::vector<std::string> FlagValues(const FlagSpec& flag, const std::string& word);

  // Candidates for the positional argument at `position` (after the
  // command); `word` is what is typed of it.
  std::vector<std::string> Positionals(const std::string& command, size_t position,
                                       const std::string& word);

  // Daemon look-ups for completion: nothing on any error.
  bool ConnectQuietly(bool all_namespaces);

  // The workloads (of `type`, in the namespace unless not
  // `in_namespace`) and the definitions completion offers; empty on any
  // error.
  std::vector<workloadmap::v1::WorkloadSummary> ListForCompletion(const std::string& type,
                                                                  bool in_namespace);

  std::vector<DefinitionRow> DefinitionsForCompletion();

  std::istream& in_;
  std::ostream& out_;
  std::ostream& err_;
  const Environment& env_;
  ParsedArgs args_;
  const CommandSpec* spec_ = nullptr;
  Settings settings_;
  std::unique_ptr<expressions::Engine> engine_;
  std::unique_ptr<definitions::Registry> registry_;
  std::optional<kube::ClusterConnection> cluster_connection_;
  std::mutex base_mu_;
  std::vector<definitions::Registry::Rejected> base_rejected_;  // under base_mu_
  // Kubeconfig mode's in-process service; the client, which may hold its
  // channel, goes first.
  std::unique_ptr<ClusterSession> session_;
  std::unique_ptr<LiveClient> client_;
};

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_INVOCATION_H_
