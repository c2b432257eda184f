#include "client/wmctl/describe_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "server/common/quantity.h"

namespace wm::wmctl {
namespace {

namespace v1 = ::workloadmap::v1;
constexpr char kGpu[] = "nvidia.com/gpu";

int64_t Get(const v1::ResourceList& r, const std::string& name) {
  auto it = r.quantities().find(name);
  return it == r.quantities().end() ? 0 : it->second;
}

bool Unhealthy(const v1::Pod& p) { return !p.ready() && p.phase() != "Succeeded"; }

// One line of the tree: a component row (a component, or one instance of a
// multi-instance component), a group row (a multi-instance component above
// its instances, with their sums, as kli prints it), a failed component's
// row (a component that could not be resolved: no instance, its error
// instead) or a pod row.
struct Row {
  std::string name;
  const v1::Component* component = nullptr;
  const v1::ComponentInstance* instance = nullptr;
  const v1::Pod* pod = nullptr;
  bool group = false;
  std::vector<Row> children;  // component rows, then pod rows
  std::string note;           // "... and K more ..." after the children

  bool Failed() const { return pod == nullptr && instance == nullptr && !group; }
  bool HasUnhealthyPod() const {
    for (const Row& c : children) {
      if ((c.pod != nullptr && Unhealthy(*c.pod)) || (c.pod == nullptr && c.HasUnhealthyPod())) {
        return true;
      }
    }
    return false;
  }
  bool MissingPods() const {
    if (group) return component->replicas().ready() < component->replicas().desired();
    return instance != nullptr && instance->replicas().ready() < instance->replicas().desired();
  }
};

class RowBuilder {
 public:
  explicit RowBuilder(const DescribeOptions& o) : o_(o) {}

  std::vector<Row> Top(const v1::ResolvedWorkload& w) {
    const v1::Component& root = w.root();
    if (root.has_error()) return {FailedRow(root)};
    if (root.instances_size() == 0) return {};
    if (root.has_pod_definition()) return {FromInstance(root.name(), root, root.instances(0))};
    return FromComponents(root.instances(0).children());
  }

 private:
  std::vector<Row> FromComponents(const google::protobuf::RepeatedPtrField<v1::Component>& cs) {
    std::vector<Row> rows;
    for (const v1::Component& c : cs) {
      if (c.has_error()) {
        rows.push_back(FailedRow(c));
        continue;
      }
      bool multi = std::any_of(c.instances().begin(), c.instances().end(),
                               [](const auto& i) { return !i.id().empty(); });
      // A multi-instance component gets its own row, its instances beneath.
      Row group;
      group.name = c.name();
      group.component = &c;
      group.group = true;
      for (const auto& instance : c.instances()) {
        Row row = FromInstance(multi ? instance.id() : c.name(), c, instance);
        bool empty = row.children.empty() && instance.replicas().desired() == 0 &&
                     instance.resources().quantities().empty() && !c.has_pod_definition();
        if (!empty) (multi ? group.children : rows).push_back(std::move(row));
        if (!multi) break;
      }
      if (!group.children.empty()) rows.push_back(std::move(group));
    }
    return rows;
  }

  static Row FailedRow(const v1::Component& c) {
    Row row;
    row.name = c.name();
    row.component = &c;
    return row;
  }

  Row FromInstance(const std::string& name, const v1::Component& c,
                   const v1::ComponentInstance& instance) {
    Row row;
    row.name = name;
    row.component = &c;
    row.instance = &instance;
    row.children = FromComponents(instance.children());
    std::vector<const v1::Pod*> pods;
    for (const auto& p : instance.pods()) pods.push_back(&p);
    size_t total = pods.size();
    int total_unhealthy = static_cast<int>(
        std::count_if(pods.begin(), pods.end(), [](const v1::Pod* p) { return Unhealthy(*p); }));
    if (o_.pod_limit > 0 && pods.size() > static_cast<size_t>(o_.pod_limit)) {
      std::stable_sort(pods.begin(), pods.end(), [](const v1::Pod* a, const v1::Pod* b) {
        return Unhealthy(*a) && !Unhealthy(*b);
      });
      pods.resize(o_.pod_limit);
      int shown = static_cast<int>(
          std::count_if(pods.begin(), pods.end(), [](const v1::Pod* p) { return Unhealthy(*p); }));
      row.note =
          absl::StrCat("... and ", total - pods.size(), " more (",
                       shown == total_unhealthy ? absl::StrCat(shown)
                                                : absl::StrCat(shown, " of ", total_unhealthy),
                       " unhealthy shown)");
    }
    std::sort(pods.begin(), pods.end(),
              [](const v1::Pod* a, const v1::Pod* b) { return a->name() < b->name(); });
    for (const v1::Pod* p : pods) {
      Row pod_row;
      pod_row.name = p->name();
      pod_row.pod = p;
      row.children.push_back(std::move(pod_row));
    }
    return row;
  }

  const DescribeOptions& o_;
};

// Keeps `limit` top-level rows, preferring failed components, then those
// with unhealthy pods, then those missing pods, in declared order; returns
// the note for the rest.
std::string LimitComponents(std::vector<Row>& rows, int limit) {
  if (limit <= 0 || rows.size() <= static_cast<size_t>(limit)) return "";
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto rank = [&](size_t i) {
    return rows[i].Failed() ? 0 : rows[i].HasUnhealthyPod() ? 1 : rows[i].MissingPods() ? 2 : 3;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank(a) < rank(b); });
  std::vector<bool> keep(rows.size(), false);
  for (int i = 0; i < limit; ++i) keep[order[i]] = true;
  int hidden = 0, failed = 0, unhealthy = 0, missing = 0;
  std::vector<Row> kept;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (keep[i]) {
      kept.push_back(std::move(rows[i]));
      continue;
    }
    ++hidden;
    failed += rows[i].Failed();
    unhealthy += rows[i].HasUnhealthyPod();
    missing += rows[i].MissingPods();
  }
  rows = std::move(kept);
  std::string note = absl::StrCat("... and ", hidden, " more component(s)");
  if (failed > 0) absl::StrAppend(&note, " (", failed, " failed)");
  if (unhealthy > 0) absl::StrAppend(&note, " (", unhealthy, " unhealthy)");
  if (missing > 0) absl::StrAppend(&note, " (", missing, " with missing pods)");
  return note;
}

using Line = std::vector<std::string>;

void RenderRows(const std::vector<Row>& rows, const std::string& note, const std::string& prefix,
                const DescribeOptions& o, std::vector<Line>& out) {
  size_t count = rows.size() + (note.empty() ? 0 : 1);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    bool last = i + 1 == count;
    std::string head = prefix + (last ? "`-- " : "|-- ") + r.name;
    if (r.Failed()) {
      // One cell: a long error sets no column's width.
      const v1::ComponentError& e = r.component->error();
      out.push_back({absl::StrCat(head, "  error: ", e.field_path(), ": ", e.message())});
      continue;
    }
    if (r.pod != nullptr) {
      int64_t gpu = Get(r.pod->resources(), kGpu);
      out.push_back({head,
                     r.pod->reason().empty()
                         ? r.pod->phase()
                         : absl::StrCat(r.pod->phase(), " (", r.pod->reason(), ")"),
                     gpu > 0 ? absl::StrCat("gpu: ", gpu) : "",
                     r.pod->node().empty() ? "<none>" : r.pod->node()});
      continue;
    }
    // A group row shows its component's sums over the instances.
    const auto& counts = r.group ? r.component->replicas() : r.instance->replicas();
    int64_t gpu = Get(r.group ? r.component->resources() : r.instance->resources(), kGpu);
    const auto& nodes = r.group ? r.component->nodes() : r.instance->nodes();
    out.push_back({head,
                   o.file_mode && !o.has_pods
                       ? absl::StrCat("replicas: ", counts.desired())
                       : absl::StrCat(counts.ready(), "/", counts.desired(), " ready"),
                   gpu > 0 ? absl::StrCat("gpu: ", gpu) : "", absl::StrJoin(nodes, ",")});
    RenderRows(r.children, r.note, prefix + (last ? "    " : "|   "), o, out);
  }
  if (!note.empty()) out.push_back({prefix + "`-- " + note});
}

void SumResources(const v1::ResourceList& r, std::map<std::string, int64_t>& into) {
  for (const auto& [name, value] : r.quantities()) into[name] += value;
}

// Resources table rows: leaf component rows, and grouping rows whose own
// request is more than their children's, so that rows sum to TOTAL. Nested
// rows are named by their path ("0/leader"). A group row is no row of the
// table and no part of a path: its instances' ids name them already.
void TableRows(const std::vector<Row>& rows, const std::string& prefix,
               std::vector<std::pair<std::string, const Row*>>& out) {
  for (const Row& r : rows) {
    if (r.pod != nullptr || r.Failed()) continue;
    if (r.group) {
      TableRows(r.children, prefix, out);
      continue;
    }
    std::vector<std::pair<std::string, const Row*>> children;
    TableRows(r.children, prefix + r.name + "/", children);
    std::map<std::string, int64_t> own, sum;
    SumResources(r.instance->resources(), own);
    for (const auto& [name, c] : children) {
      if (name.rfind(prefix + r.name + "/", 0) == 0 &&
          name.find('/', prefix.size() + r.name.size() + 1) == std::string::npos) {
        SumResources(c->instance->resources(), sum);
      }
    }
    if (children.empty() || own != sum) out.push_back({prefix + r.name, &r});
    out.insert(out.end(), children.begin(), children.end());
  }
}

Json ResourcesJson(const v1::ResourceList& r) {
  Json out = {
      {"gpus", Get(r, kGpu)}, {"cpuMillis", Get(r, "cpu")}, {"memoryBytes", Get(r, "memory")}};
  for (const auto& [name, value] : r.quantities()) {
    if (name != kGpu && name != "cpu" && name != "memory") out["other"][name] = value;
  }
  return out;
}

Json ComponentJson(const Row& r) {
  Json c = {{"name", r.name}};
  if (r.component->has_kind()) c["kind"] = r.component->kind().kind();
  if (r.Failed()) {
    c["error"] = {{"fieldPath", r.component->error().field_path()},
                  {"message", r.component->error().message()}};
    return c;
  }
  const auto& counts = r.group ? r.component->replicas() : r.instance->replicas();
  c["replicas"] = {
      {"desired", counts.desired()}, {"current", counts.current()}, {"ready", counts.ready()}};
  c["resources"] = ResourcesJson(r.group ? r.component->resources() : r.instance->resources());
  const auto& nodes = r.group ? r.component->nodes() : r.instance->nodes();
  if (!nodes.empty()) c["nodes"] = std::vector<std::string>(nodes.begin(), nodes.end());
  for (const Row& child : r.children) {
    if (child.pod != nullptr) {
      Json pod = {{"name", child.pod->name()},
                  {"phase", child.pod->phase()},
                  {"ready", child.pod->ready()},
                  {"node", child.pod->node().empty() ? Json() : Json(child.pod->node())},
                  {"resources", ResourcesJson(child.pod->resources())}};
      if (!child.pod->reason().empty()) pod["reason"] = child.pod->reason();
      c["pods"].push_back(pod);
    } else {
      c["children"].push_back(ComponentJson(child));
    }
  }
  return c;
}

}  // namespace

std::string Age(const std::string& creation_timestamp, absl::Time now) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, creation_timestamp, &t, &err)) return "<unknown>";
  int64_t s = absl::ToInt64Seconds(now - t);
  // As kubectl: a clock a little behind the apiserver's is no error.
  if (s < -1) return "<invalid>";
  if (s < 0) s = 0;
  if (s < 120) return absl::StrCat(s, "s");
  if (s < 2 * 3600) return absl::StrCat(s / 60, "m");
  if (s < 2 * 86400) return absl::StrCat(s / 3600, "h");
  return absl::StrCat(s / 86400, "d");
}

std::string DescribeText(const v1::ResolvedWorkload& w, const DescribeOptions& o) {
  std::vector<std::string> header = {
      absl::StrCat(w.ref().kind(), "/", w.ref().name()),
      absl::StrCat("namespace: ", w.ref().namespace_().empty() ? "<none>" : w.ref().namespace_()),
      absl::StrCat("definition: ", w.definition().name(), " (", w.definition().origin(), ")")};
  bool show_phase =
      !o.file_mode || w.status().conditions_size() > 0 || !w.status().phase().empty() || o.has_pods;
  if (o.file_mode) {
    header.push_back(o.has_pods ? "(file mode)" : "(file mode: no live status)");
  } else {
    header.push_back(absl::StrCat("age: ", Age(w.creation_timestamp(), o.now)));
  }
  std::string out = absl::StrJoin(header, "   ") + "\n\n";

  RowBuilder builder(o);
  std::vector<Row> rows = builder.Top(w);
  std::string note = LimitComponents(rows, o.component_limit);
  // The limit also applies to the instances of a multi-instance component.
  for (Row& r : rows) {
    if (r.group) r.note = LimitComponents(r.children, o.component_limit);
  }
  std::vector<Line> lines;
  RenderRows(rows, note, "", o, lines);
  out += AlignColumns(lines, 2);

  if (show_phase && w.status().matched_statuses_size() > 0) {
    out += "\nPhase: " + absl::StrJoin(w.status().matched_statuses(), ",") + "\n";
  } else if (show_phase && !w.has_status()) {
    out += "\nPhase: Undefined\n";
  }

  // Resources table (never truncated: built from all rows).
  std::vector<Row> all_rows = builder.Top(w);
  std::vector<std::pair<std::string, const Row*>> table;
  TableRows(all_rows, "", table);
  std::set<std::string> extra;
  for (const auto& [name, value] : w.resources().quantities()) {
    if (name != kGpu && name != "cpu" && name != "memory") extra.insert(name);
  }
  Line head = {"COMPONENT", "REPLICAS", "GPU", "CPU", "MEMORY"};
  for (const auto& e : extra) head.push_back(absl::AsciiStrToUpper(e));
  std::vector<Line> table_lines = {head};
  auto cells = [&](const std::string& name, int64_t replicas, const v1::ResourceList& r) {
    Line l = {name, absl::StrCat(replicas), FormatReported(kGpu, Get(r, kGpu)),
              FormatReported("cpu", Get(r, "cpu")), FormatReported("memory", Get(r, "memory"))};
    for (const auto& e : extra) l.push_back(FormatReported(e, Get(r, e)));
    return l;
  };
  int64_t replicas = 0;
  for (const auto& [name, r] : table) {
    table_lines.push_back(cells(name, r->instance->replicas().desired(), r->instance->resources()));
    replicas += r->instance->replicas().desired();
  }
  table_lines.push_back(cells("TOTAL", replicas, w.resources()));
  out += "\nResources:\n" + AlignColumns(table_lines, 3);
  return out;
}

Json DescribeJson(const v1::ResolvedWorkload& w, const DescribeOptions& o) {
  Json view = {
      {"name", w.ref().name()},
      {"namespace", w.ref().namespace_()},
      {"kind", w.ref().kind()},
      {"apiVersion", w.ref().group().empty()
                         ? w.ref().version()
                         : absl::StrCat(w.ref().group(), "/", w.ref().version())},
      {"createdAt", w.creation_timestamp().empty() ? Json() : Json(w.creation_timestamp())},
      {"definition", w.definition().name()},
      {"origin", w.definition().origin()},
      {"fileMode", o.file_mode}};
  std::vector<std::string> statuses(w.status().matched_statuses().begin(),
                                    w.status().matched_statuses().end());
  view["phases"] = statuses.empty() ? std::vector<std::string>{"Undefined"} : statuses;
  view["matchedStatuses"] = statuses;
  if (!w.status().phase().empty()) view["phase"] = w.status().phase();
  for (const auto& c : w.status().conditions()) {
    view["conditions"].push_back({{"type", c.type()},
                                  {"status", c.status()},
                                  {"reason", c.reason()},
                                  {"message", c.message()}});
  }
  view["resources"] = ResourcesJson(w.resources());
  RowBuilder builder(o);
  std::vector<Row> rows = builder.Top(w);
  view["components"] = Json::array();
  for (const Row& r : rows) view["components"].push_back(ComponentJson(r));
  if (w.has_gang()) {
    Json gang;
    for (const auto& g : w.gang().pod_groups()) {
      Json group = {{"name", g.name()}, {"form", g.form()}};
      if (g.has_min_member()) group["minMember"] = g.min_member();
      if (g.has_min_sub_group()) group["minSubGroup"] = g.min_sub_group();
      for (const auto& s : g.sub_groups()) {
        Json sub = {{"name", s.name()}};
        if (!s.parent().empty()) sub["parent"] = s.parent();
        if (s.has_min_member()) sub["minMember"] = s.min_member();
        group["subGroups"].push_back(sub);
      }
      if (g.has_topology()) {
        group["topology"] = {{"topology", g.topology().topology()},
                             {"requiredTopologyLevel", g.topology().required_topology_level()},
                             {"preferredTopologyLevel", g.topology().preferred_topology_level()}};
      }
      gang["podGroups"].push_back(group);
    }
    for (const auto& a : w.gang().assignments()) {
      Json assignment = {{"pod", a.pod()}};
      if (!a.pod_group().empty()) assignment["podGroup"] = a.pod_group();
      if (!a.sub_group().empty()) assignment["subGroup"] = a.sub_group();
      if (!a.error().empty()) assignment["error"] = a.error();
      gang["assignments"].push_back(assignment);
    }
    view["gang"] = gang;
  }
  if (w.warnings_size() > 0) {
    view["warnings"] = std::vector<std::string>(w.warnings().begin(), w.warnings().end());
  }
  return view;
}

std::string AlignColumns(const std::vector<std::vector<std::string>>& lines, size_t gap) {
  std::vector<size_t> widths;
  for (const std::vector<std::string>& l : lines) {
    if (l.size() < 2) continue;  // notes span the line and set no width
    for (size_t c = 0; c < l.size(); ++c) {
      if (widths.size() <= c) widths.push_back(0);
      widths[c] = std::max(widths[c], l[c].size());
    }
  }
  std::string out;
  for (const std::vector<std::string>& l : lines) {
    std::string line;
    for (size_t c = 0; c < l.size(); ++c) {
      line += l[c];
      if (c + 1 < l.size()) line += std::string(widths[c] - l[c].size() + gap, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace wm::wmctl
