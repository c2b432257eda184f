// `wmctl get`, `describe TYPE/NAME` and `gang POD`: answered by workloadmapd
// (daemon mode) or the daemon's libraries in-process (kubeconfig mode).
#include <algorithm>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/wmctl/invocation.h"
#include "client/wmctl/live_view.h"

namespace wm::wmctl {

namespace v1 = ::workloadmap::v1;

namespace {

// A Kind starts with an uppercase letter, else TYPE is a plural resource
// (as the daemon matches them); ".GROUP" after either sets the group.
void SetType(const std::string& type, v1::ObjectRef* ref) {
  size_t dot = type.find('.');
  std::string head = type.substr(0, dot);
  if (dot != std::string::npos) ref->set_group(type.substr(dot + 1));
  if (absl::ascii_isupper(static_cast<unsigned char>(head[0]))) {
    ref->set_kind(head);
  } else {
    ref->set_resource(head);
  }
}

}  // namespace

std::string Invocation::TypeAndName(const std::string& command, bool name_required,
                                    std::string& type, std::string& name) {
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

std::string Invocation::KindFilter(const std::string& type) {
  size_t dot = type.find('.');
  if (dot == std::string::npos || !absl::ascii_isupper(static_cast<unsigned char>(type[0]))) {
    return type;
  }
  return absl::StrCat(type.substr(dot + 1), "/", type.substr(0, dot));
}

int Invocation::Get() {
  std::string type, name;
  std::string bad = TypeAndName("get", false, type, name);
  if (!bad.empty()) return Usage(bad);
  bool all_namespaces = args_.Has("--all-namespaces");
  if (all_namespaces && args_.Has("--namespace")) {
    return Usage("get takes -n NAMESPACE or -A, not both");
  }
  if (args_.Has("--all-types") && !type.empty()) {
    return Usage("get takes TYPE or --all-types, not both");
  }
  std::string selector = args_.Last("--selector");
  if (!name.empty() && !selector.empty()) return Usage("get takes NAME or -l, not both");
  if (int code = Connect(all_namespaces)) return code;
  v1::ListWorkloadsRequest request;
  request.set_cluster(settings_.cluster);
  if (!all_namespaces) request.set_namespace_(settings_.namespace_);
  if (!type.empty()) request.add_kinds(KindFilter(type));
  if (args_.Has("--phase")) {
    for (const std::string& value : args_.flags.at("--phase")) {
      for (absl::string_view p : absl::StrSplit(value, ',', absl::SkipEmpty())) {
        request.add_statuses(std::string(p));
      }
    }
  }
  request.set_label_selector(selector);
  std::vector<v1::WorkloadSummary> rows;
  grpc::Status status = client_->ListAllWorkloads(request, &rows);
  if (!status.ok()) return CallFailed(status);
  std::string where =
      all_namespaces ? "in any namespace" : absl::StrCat("in namespace ", settings_.namespace_);
  if (!name.empty()) {
    rows.erase(std::remove_if(rows.begin(), rows.end(),
                              [&](const auto& row) { return row.ref().name() != name; }),
               rows.end());
    if (rows.empty()) return Fail(3, absl::StrCat(type, " ", name, " not found ", where));
  }
  if (settings_.output == "json" || settings_.output == "yaml") {
    // kli: a NAME prints its view bare, a listing {"items", "count"}.
    if (!name.empty() && rows.size() == 1) {
      Print(WithMode(GetRowJson(rows[0])));
    } else {
      Json items = Json::array();
      for (const auto& row : rows) items.push_back(GetRowJson(row));
      Print(WithMode({{"items", items}, {"count", items.size()}}));
    }
  } else if (rows.empty()) {
    err_ << "No workloads found " << where << ".\n";
  } else {
    out_ << GetTable(
        rows,
        {.all_namespaces = all_namespaces, .wide = settings_.output == "wide", .now = env_.now()});
  }
  for (const auto& row : rows) {
    if (!row.error().empty()) {
      err_ << "warning: " << row.ref().kind() << " " << row.ref().namespace_() << "/"
           << row.ref().name() << ": " << row.error() << "\n";
    }
    for (const auto& c : row.components()) {
      if (c.error().empty()) continue;
      err_ << "warning: " << row.ref().kind() << " " << row.ref().namespace_() << "/"
           << row.ref().name() << ": component " << c.name() << ": " << c.error() << "\n";
    }
  }
  PrintSessionWarnings();
  return 0;
}

DescribeOptions Invocation::Options(bool file_mode, bool has_pods) {
  DescribeOptions options;
  options.file_mode = file_mode;
  options.has_pods = has_pods;
  options.pod_limit = std::stoi(args_.Last("--pod-limit", "0"));
  options.component_limit = std::stoi(args_.Last("--component-limit", "0"));
  options.now = env_.now();
  return options;
}

int Invocation::LiveDescribe() {
  if (args_.positional.empty()) return Usage("describe needs TYPE/NAME or -f FILE");
  std::string type, name;
  std::string bad = TypeAndName("describe", true, type, name);
  if (!bad.empty()) return Usage(bad);
  if (int code = Connect()) return code;
  v1::ResolveWorkloadRequest request;
  v1::ObjectRef* ref = request.mutable_ref();
  SetType(type, ref);
  ref->set_namespace_(settings_.namespace_);
  ref->set_name(name);
  ref->set_cluster(settings_.cluster);
  request.set_include_pods(true);
  // Every pod: --pod-limit is applied here, unhealthy first, so that the
  // "... and K more (U unhealthy shown)" line can count what it hides.
  request.set_pod_limit(0);
  v1::ResolveWorkloadResponse response;
  grpc::Status status = client_->ResolveWorkload(request, &response);
  if (!status.ok()) {
    PrintSessionWarnings();
    if (ExitCodeFor(status) == 4 && settings_.output != "table") {
      Print({{"error", "no_definition_for_type"},
             {"type", type},
             {"message", "no Karta definition covers this workload type"},
             {"hint",
              "give the daemon one with --definitions PATH, or add a Karta to the "
              "cluster"}});
    }
    return CallFailed(status);
  }
  DescribeOptions options = Options(false, true);
  if (settings_.output == "table") {
    out_ << DescribeText(response.workload(), options);
  } else {
    Print(WithMode(DescribeJson(response.workload(), options)));
  }
  for (const auto& w : response.workload().warnings()) err_ << "warning: " << w << "\n";
  PrintSessionWarnings();
  return 0;
}

int Invocation::Gang() {
  if (args_.positional.size() != 1) return Usage("gang takes one POD");
  std::string pod = args_.positional[0];
  for (const char* prefix : {"pod/", "pods/", "Pod/"}) {
    if (absl::StartsWith(pod, prefix)) pod = pod.substr(strlen(prefix));
  }
  if (pod.empty() || absl::StrContains(pod, '/')) return Usage("gang takes one POD");
  if (int code = Connect()) return code;
  v1::GetGangInstructionsRequest request;
  request.mutable_pod()->set_cluster(settings_.cluster);
  request.mutable_pod()->set_namespace_(settings_.namespace_);
  request.mutable_pod()->set_name(pod);
  v1::GetGangInstructionsResponse response;
  grpc::Status status = client_->GetGangInstructions(request, &response);
  if (!status.ok()) {
    PrintSessionWarnings();
    return CallFailed(status);
  }
  if (settings_.output == "table") {
    out_ << GangText(settings_.namespace_, pod, response);
  } else {
    Print(WithMode(GangJson(settings_.namespace_, pod, response)));
  }
  PrintSessionWarnings();
  if (!response.assignment().error().empty()) {
    return Fail(1, absl::StrCat("pod ", pod, " has no pod group: ", response.assignment().error()));
  }
  return 0;
}

}  // namespace wm::wmctl
