#include "client/wmctl/live_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/wmctl/describe_view.h"

namespace wm::wmctl {
namespace {

namespace v1 = ::workloadmap::v1;
using Line = std::vector<std::string>;

std::string ApiVersion(const v1::ObjectRef& ref) {
  return ref.group().empty() ? ref.version() : absl::StrCat(ref.group(), "/", ref.version());
}

std::string Or(const std::string& value, const std::string& fallback) {
  return value.empty() ? fallback : value;
}

const v1::PodGroup* FindGroup(const v1::GangInstructions& gang, const std::string& name) {
  for (const v1::PodGroup& g : gang.pod_groups()) {
    if (g.name() == name) return &g;
  }
  return nullptr;
}

// The pod's group: the one its assignment names, else the only one.
const v1::PodGroup* GroupOf(const v1::GetGangInstructionsResponse& r) {
  if (!r.assignment().pod_group().empty()) return FindGroup(r.gang(), r.assignment().pod_group());
  return r.gang().pod_groups_size() == 1 ? &r.gang().pod_groups(0) : nullptr;
}

std::string TopologyText(const v1::TopologyConstraint& t) {
  std::vector<std::string> parts;
  if (!t.required_topology_level().empty()) {
    parts.push_back("required " + t.required_topology_level());
  }
  if (!t.preferred_topology_level().empty()) {
    parts.push_back("preferred " + t.preferred_topology_level());
  }
  return parts.empty() ? t.topology()
                       : absl::StrCat(t.topology(), " (", absl::StrJoin(parts, ", "), ")");
}

Json TopologyJson(const v1::TopologyConstraint& t) {
  return {{"topology", t.topology()},
          {"requiredTopologyLevel", t.required_topology_level()},
          {"preferredTopologyLevel", t.preferred_topology_level()}};
}

}  // namespace

std::string ComponentsCell(const v1::WorkloadSummary& row) {
  std::vector<std::string> parts;
  for (const v1::ComponentSummary& c : row.components()) {
    if (!c.error().empty()) {
      parts.push_back(absl::StrCat(c.name(), " error"));
      continue;
    }
    parts.push_back(absl::StrCat(c.instance_id().empty() ? c.name() : c.instance_id(), " ",
                                 c.replicas().ready(), "/", c.replicas().desired()));
  }
  return parts.empty() ? "<none>" : absl::StrJoin(parts, ", ");
}

std::string StatusCell(const v1::WorkloadSummary& row) {
  if (!row.error().empty()) return "Error";
  if (row.matched_statuses_size() == 0) return "Undefined";
  return absl::StrJoin(row.matched_statuses(), ",");
}

std::string GetTable(const std::vector<v1::WorkloadSummary>& rows, const GetOptions& o) {
  std::vector<Line> lines;
  Line head;
  if (o.all_namespaces) head.push_back("NAMESPACE");
  for (const char* h : {"NAME", "TYPE", "STATUS", "COMPONENTS", "GPU", "AGE"}) head.push_back(h);
  if (o.wide) {
    head.push_back("CLUSTER");
    head.push_back("DEFINITION");
  }
  lines.push_back(head);
  for (const v1::WorkloadSummary& row : rows) {
    Line l;
    if (o.all_namespaces) l.push_back(Or(row.ref().namespace_(), "<none>"));
    l.push_back(row.ref().name());
    l.push_back(row.ref().kind());
    l.push_back(StatusCell(row));
    l.push_back(ComponentsCell(row));
    l.push_back(absl::StrCat(row.gpus()));
    l.push_back(Age(row.creation_timestamp(), o.now));
    if (o.wide) {
      l.push_back(Or(row.ref().cluster(), "<none>"));
      l.push_back(Or(row.definition(), "<none>"));
    }
    lines.push_back(std::move(l));
  }
  return AlignColumns(lines, 3);
}

Json GetRowJson(const v1::WorkloadSummary& row) {
  std::vector<std::string> statuses(row.matched_statuses().begin(), row.matched_statuses().end());
  Json j = {
      {"name", row.ref().name()},
      {"namespace", row.ref().namespace_()},
      {"kind", row.ref().kind()},
      {"apiVersion", ApiVersion(row.ref())},
      {"cluster", row.ref().cluster()},
      {"createdAt", row.creation_timestamp().empty() ? Json() : Json(row.creation_timestamp())},
      {"definition", row.definition()},
      {"phases", statuses.empty() ? std::vector<std::string>{"Undefined"} : statuses},
      {"matchedStatuses", statuses},
      {"gpus", row.gpus()}};
  if (!row.phase().empty()) j["phase"] = row.phase();
  j["components"] = Json::array();
  for (const v1::ComponentSummary& c : row.components()) {
    Json component = {{"name", c.name()}};
    if (!c.instance_id().empty()) component["instanceId"] = c.instance_id();
    component["replicas"] = {{"desired", c.replicas().desired()},
                             {"current", c.replicas().current()},
                             {"ready", c.replicas().ready()}};
    component["gpus"] = c.gpus();
    if (!c.error().empty()) component["error"] = c.error();
    j["components"].push_back(component);
  }
  if (!row.error().empty()) j["error"] = row.error();
  return j;
}

std::string GangText(const std::string& namespace_, const std::string& pod,
                     const v1::GetGangInstructionsResponse& r) {
  const v1::ObjectRef& owner = r.top_owner();
  std::string out = absl::StrCat("Pod/", pod, "   namespace: ", Or(namespace_, "<none>"),
                                 "   top owner: ", owner.kind(), "/", owner.name(), "\n");
  if (const v1::PodGroup* g = GroupOf(r)) {
    std::vector<std::string> head = {absl::StrCat("PodGroup: ", g->name())};
    if (g->has_min_member()) head.push_back(absl::StrCat("minMember: ", g->min_member()));
    if (g->has_min_sub_group()) head.push_back(absl::StrCat("minSubGroup: ", g->min_sub_group()));
    if (!g->queue().empty()) head.push_back("queue: " + g->queue());
    if (!g->priority_class_name().empty()) {
      head.push_back("priorityClassName: " + g->priority_class_name());
    }
    if (g->has_topology()) head.push_back("topology: " + TopologyText(g->topology()));
    out += "\n" + absl::StrJoin(head, "   ") + "\n";
    if (g->sub_groups_size() > 0) {
      bool min_sub_group = std::any_of(g->sub_groups().begin(), g->sub_groups().end(),
                                       [](const v1::SubGroup& s) { return s.has_min_sub_group(); });
      bool topology = std::any_of(g->sub_groups().begin(), g->sub_groups().end(),
                                  [](const v1::SubGroup& s) { return s.has_topology(); });
      Line head_line = {"SUBGROUP", "PARENT", "MINMEMBER"};
      if (min_sub_group) head_line.push_back("MINSUBGROUP");
      if (topology) head_line.push_back("TOPOLOGY");
      std::vector<Line> lines = {head_line};
      for (const v1::SubGroup& s : g->sub_groups()) {
        Line l = {s.name(), Or(s.parent(), "<none>"),
                  s.has_min_member() ? absl::StrCat(s.min_member()) : "-"};
        if (min_sub_group) {
          l.push_back(s.has_min_sub_group() ? absl::StrCat(s.min_sub_group()) : "-");
        }
        if (topology) l.push_back(s.has_topology() ? TopologyText(s.topology()) : "-");
        lines.push_back(std::move(l));
      }
      out += AlignColumns(lines, 3);
    }
  }
  const v1::PodGangAssignment& a = r.assignment();
  std::vector<std::string> assignment;
  if (!a.pod_group().empty()) assignment.push_back("podGroup: " + a.pod_group());
  if (!a.sub_group().empty()) assignment.push_back("subGroup: " + a.sub_group());
  if (!a.component().empty()) assignment.push_back("component: " + a.component());
  if (!a.instance_id().empty()) assignment.push_back("instance: " + a.instance_id());
  if (!a.error().empty()) assignment.push_back("error: " + a.error());
  out += "\nAssignment:   " + absl::StrJoin(assignment, "   ") + "\n";
  return out;
}

Json GangJson(const std::string& namespace_, const std::string& pod,
              const v1::GetGangInstructionsResponse& r) {
  const v1::ObjectRef& owner = r.top_owner();
  Json j = {{"pod", pod},
            {"namespace", namespace_},
            {"topOwner",
             {{"kind", owner.kind()},
              {"apiVersion", ApiVersion(owner)},
              {"namespace", owner.namespace_()},
              {"name", owner.name()},
              {"cluster", owner.cluster()}}}};
  if (const v1::PodGroup* g = GroupOf(r)) {
    Json group = {{"name", g->name()}, {"form", g->form()}};
    if (g->has_min_member()) group["minMember"] = g->min_member();
    if (g->has_min_sub_group()) group["minSubGroup"] = g->min_sub_group();
    if (!g->queue().empty()) group["queue"] = g->queue();
    if (!g->priority_class_name().empty()) group["priorityClassName"] = g->priority_class_name();
    if (g->has_topology()) group["topology"] = TopologyJson(g->topology());
    for (const v1::SubGroup& s : g->sub_groups()) {
      Json sub = {{"name", s.name()}};
      if (!s.parent().empty()) sub["parent"] = s.parent();
      if (s.has_min_member()) sub["minMember"] = s.min_member();
      if (s.has_min_sub_group()) sub["minSubGroup"] = s.min_sub_group();
      if (s.has_topology()) sub["topology"] = TopologyJson(s.topology());
      group["subGroups"].push_back(sub);
    }
    j["podGroup"] = group;
  } else {
    j["podGroup"] = nullptr;
  }
  const v1::PodGangAssignment& a = r.assignment();
  Json assignment = Json::object();
  if (!a.pod_group().empty()) assignment["podGroup"] = a.pod_group();
  if (!a.sub_group().empty()) assignment["subGroup"] = a.sub_group();
  if (!a.component().empty()) assignment["component"] = a.component();
  if (!a.instance_id().empty()) assignment["instanceId"] = a.instance_id();
  if (!a.error().empty()) assignment["error"] = a.error();
  j["assignment"] = assignment;
  return j;
}

}  // namespace wm::wmctl
