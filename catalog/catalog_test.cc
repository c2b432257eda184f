// Runs every case under catalog/cases/<definition>/ against the catalog
// definition of that name (read from the source tree, so editing a case or
// a definition needs no rebuild), and checks that every definition
// validates and is named after its root kind.

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "server/common/testing/optional_input.h"
#include "server/common/yaml_json.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"
#include "server/definitions/schema_lint.h"
#include "server/expressions/jq_engine.h"
#include "server/resolution/gang.h"
#include "server/resolution/mutation.h"
#include "server/resolution/resolver.h"
#include "server/resolution/status.h"
#include "server/resolution/tree.h"

namespace wm {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::workloadmap::v1;
using definitions::CompiledDefinition;

const std::string kCatalog = std::string(WM_SOURCE_DIR) + "/catalog";

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewJqEngine({.workers = 2}).value().release();
  return *engine;
}

// WM_CATALOG_FILTER=a,b limits the run to definitions whose file name
// contains one of the comma-separated words (for work on a few at a time).
bool Selected(const std::string& file) {
  const char* filter = std::getenv("WM_CATALOG_FILTER");
  if (filter == nullptr || *filter == '\0') return true;
  for (absl::string_view word : absl::StrSplit(filter, ',', absl::SkipEmpty())) {
    if (absl::StrContains(fs::path(file).filename().string(), word)) return true;
  }
  return false;
}

std::vector<std::string> DefinitionFiles() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kCatalog)) {
    if (e.path().extension() == ".yaml" && Selected(e.path().string())) {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::shared_ptr<const CompiledDefinition> Compile(const std::string& file, std::string* error) {
  auto parsed = definitions::LoadDefinitionFiles(file, definitions::Origin::kCatalog);
  if (!parsed.ok()) {
    *error = std::string(parsed.status().message());
    return nullptr;
  }
  if (parsed->size() != 1) {
    *error = "a catalog file holds exactly one definition";
    return nullptr;
  }
  auto& p = (*parsed)[0];
  std::vector<Finding> findings = p.findings;
  if (p.definition) {
    std::vector<Finding> more;
    auto compiled = definitions::CompileDefinition(*p.definition, Engine(), &more);
    findings.insert(findings.end(), more.begin(), more.end());
    if (compiled.ok() && findings.empty()) return *compiled;
  }
  for (const auto& f : findings) *error += "  " + f.ToString() + "\n";
  return nullptr;
}

// <group-slug>-<kind-lowercase>-<version>, core group slug "core".
std::string ExpectedName(const Gvk& k) {
  std::string slug = k.group.empty() ? "core" : k.group;
  std::replace(slug.begin(), slug.end(), '.', '-');
  return absl::StrCat(slug, "-", absl::AsciiStrToLower(k.kind), "-", k.version);
}

TEST(CatalogTest, EveryDefinitionValidatesWithoutWarnings) {
  std::set<std::string> kinds;
  for (const std::string& file : DefinitionFiles()) {
    std::string error;
    auto def = Compile(file, &error);
    ASSERT_NE(def, nullptr) << file << ":\n" << error;
    const auto& d = *def->definition;
    EXPECT_EQ(d.name, ExpectedName(*d.root.kind)) << file;
    EXPECT_EQ(fs::path(file).stem().string(), d.name) << file;
    EXPECT_TRUE(kinds.insert(d.root.kind->ToString()).second)
        << "two definitions for " << d.root.kind->ToString();
  }
}

// "component field: message" of every component that could not be
// resolved, one a line.
std::string ComponentErrors(const v1::Component& c) {
  std::string out;
  if (c.has_error()) {
    absl::StrAppend(&out, c.name(), " ", c.error().field_path(), ": ", c.error().message(), "\n");
  }
  for (const auto& i : c.instances()) {
    for (const auto& child : i.children()) out += ComponentErrors(child);
  }
  return out;
}

// Flattened view of a resolved tree: "component" and "component[instance]".
void Flatten(const v1::Component& c, std::map<std::string, const v1::ComponentInstance*>& out,
             std::map<std::string, std::vector<std::string>>& ids) {
  for (const auto& i : c.instances()) {
    out[i.id().empty() ? c.name() : absl::StrCat(c.name(), "[", i.id(), "]")] = &i;
    if (!i.id().empty()) ids[c.name()].push_back(i.id());
    for (const auto& child : i.children()) Flatten(child, out, ids);
  }
  // Children repeat under every instance: keep the ids of the first copy.
  for (auto& [name, list] : ids) {
    std::set<std::string> seen;
    std::vector<std::string> unique;
    for (auto& id : list) {
      if (seen.insert(id).second) unique.push_back(id);
    }
    list = unique;
  }
}

class CaseRunner {
 public:
  CaseRunner(const CompiledDefinition& def, std::string where)
      : def_(def), where_(std::move(where)) {}

  void Run(const Json& c) {
    const Json& expect = c.at("expect");
    const Json& object = c.at("object");
    std::vector<Json> pods = c.value("pods", Json::array());
    std::vector<Json> children = c.value("children", Json::array());
    resolution::WorkloadInput input{&object};
    for (const auto& p : pods) input.pods.push_back(&p);
    for (const auto& o : children) input.owners.push_back(&o);
    auto resolved = resolution::ResolveWorkload(def_, Engine(), input);
    if (expect.contains("error")) {
      // The resolution's error, or a component's (a partial answer).
      std::string error = resolved.ok() ? ComponentErrors(resolved->root())
                                        : std::string(resolved.status().message());
      EXPECT_NE(error.find(expect["error"].get<std::string>()), std::string::npos)
          << where_ << ": want an error containing " << expect["error"] << ", got: " << error;
      return;
    }
    ASSERT_TRUE(resolved.ok()) << where_ << ": " << resolved.status();
    const v1::ResolvedWorkload& w = *resolved;
    EXPECT_EQ(ComponentErrors(w.root()), "") << where_ << ": a partial answer";
    if (expect.contains("matchedStatuses")) {
      std::vector<std::string> got(w.status().matched_statuses().begin(),
                                   w.status().matched_statuses().end());
      EXPECT_EQ(Json(got), expect["matchedStatuses"]) << where_ << ": matchedStatuses";
    }
    if (expect.contains("phase")) {
      EXPECT_EQ(w.status().phase(), expect["phase"]) << where_ << ": phase";
    }
    std::map<std::string, const v1::ComponentInstance*> flat;
    std::map<std::string, std::vector<std::string>> ids;
    Flatten(w.root(), flat, ids);
    if (expect.contains("instances")) {
      for (const auto& [component, want] : expect["instances"].items()) {
        EXPECT_EQ(Json(ids[component]), want) << where_ << ": instances of " << component;
      }
    }
    if (expect.contains("components")) {
      for (const auto& [key, want] : expect["components"].items()) {
        auto it = flat.find(key);
        if (it == flat.end()) {
          std::vector<std::string> known;
          for (const auto& [k, v] : flat) known.push_back(k);
          ADD_FAILURE() << where_ << ": no component " << key << " (have "
                        << absl::StrJoin(known, ", ") << ")";
          continue;
        }
        const auto& i = *it->second;
        Json got = {{"desired", i.replicas().desired()},
                    {"current", i.replicas().current()},
                    {"ready", i.replicas().ready()}};
        if (i.scale().has_replicas()) got["replicas"] = i.scale().replicas();
        if (i.scale().has_min_replicas()) got["minReplicas"] = i.scale().min_replicas();
        if (i.scale().has_max_replicas()) got["maxReplicas"] = i.scale().max_replicas();
        for (const auto& [field, value] : want.items()) {
          EXPECT_EQ(got.value(field, Json()), value)
              << where_ << ": " << key << "." << field << " (got " << got.dump() << ")";
        }
      }
    }
    if (expect.contains("resources")) {
      Json got = Json::object();
      for (const auto& [name, value] : w.resources().quantities()) got[name] = value;
      EXPECT_EQ(got, expect["resources"]) << where_ << ": resources";
    }
    if (expect.contains("podGroup")) CheckPodGroup(expect["podGroup"], object, pods);
    for (const char* action : {"suspend", "resume"}) {
      if (expect.contains(action))
        CheckSuspend(object, expect[action], std::string(action) == "suspend");
    }
  }

 private:
  void CheckPodGroup(const Json& want, const Json& object, const std::vector<Json>& pods) {
    const Json* pod = nullptr;
    for (const auto& p : pods) {
      if (p["metadata"]["name"] == want.at("pod")) pod = &p;
    }
    ASSERT_NE(pod, nullptr) << where_ << ": podGroup.pod " << want["pod"]
                            << " is not among the pods";
    absl::Status s = Engine().Run([&](expressions::Session& session) {
      resolution::Evaluation eval(def_, session);
      resolution::ComponentNode tree = resolution::BuildTree(eval, eval.Load(object));
      if (const resolution::ComponentNode* failed = resolution::FirstFailed(tree)) {
        return failed->error;
      }
      auto gang = resolution::GangForPod(eval, tree, object, *pod, eval.Load(*pod));
      if (!gang.ok()) return gang.status();
      const auto& g = gang->group;
      Json got = {{"name", g.name()}, {"subGroup", gang->assignment.sub_group()}};
      if (g.has_min_member()) got["minMember"] = g.min_member();
      if (g.has_min_sub_group()) got["minSubGroup"] = g.min_sub_group();
      Json subs = Json::array();
      for (const auto& sg : g.sub_groups()) {
        Json sub = {{"name", sg.name()}};
        if (sg.has_min_member()) sub["minMember"] = sg.min_member();
        if (!sg.parent().empty()) sub["parent"] = sg.parent();
        subs.push_back(sub);
      }
      got["subGroups"] = subs;
      for (const auto& [field, value] : want.items()) {
        if (field == "pod") continue;
        EXPECT_EQ(got.value(field, Json()), value)
            << where_ << ": podGroup." << field << " (got " << got.dump() << ")";
      }
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << where_ << ": podGroup: " << s;
  }

  void CheckSuspend(const Json& object, const Json& want, bool suspend) {
    absl::Status s = Engine().Run([&](expressions::Session& session) {
      resolution::Evaluation eval(def_, session);
      auto out = resolution::ApplySuspend(eval, object, 0, suspend);
      if (!out.ok()) return out.status();
      EXPECT_EQ(resolution::JsonPatch(object, *out), want)
          << where_ << (suspend ? ": suspend" : ": resume");
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << where_ << ": " << s;
  }

  const CompiledDefinition& def_;
  std::string where_;
};

TEST(CatalogTest, EveryCasePasses) {
  int cases = 0;
  for (const std::string& file : DefinitionFiles()) {
    std::string error;
    auto def = Compile(file, &error);
    if (def == nullptr) continue;  // reported by the test above
    fs::path dir = fs::path(kCatalog) / "cases" / def->definition->name;
    int count = 0;
    bool has_suspend = false, has_resume = false, has_pod_group = false;
    if (fs::is_directory(dir)) {
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().string());
      std::sort(files.begin(), files.end());
      for (const std::string& case_file : files) {
        auto docs = ReadYamlFile(case_file);
        ASSERT_TRUE(docs.ok()) << docs.status();
        std::string where =
            absl::StrCat(def->definition->name, " / ", fs::path(case_file).stem().string());
        const Json& expect = (*docs).at(0).at("expect");
        has_suspend = has_suspend || expect.contains("suspend");
        has_resume = has_resume || expect.contains("resume");
        has_pod_group = has_pod_group || expect.contains("podGroup");
        CaseRunner(*def, where).Run((*docs).at(0));
        ++count;
      }
    }
    EXPECT_GE(count, 5) << def->definition->name << " has " << count
                        << " cases; at least 5 are required";
    const auto& d = *def->definition;
    if (d.root.suspend) {
      EXPECT_TRUE(has_suspend && has_resume)
          << d.name
          << " has a suspend definition: a case must assert the suspend and resume patches";
    }
    if (!d.gang.empty()) {
      EXPECT_TRUE(has_pod_group) << d.name
                                 << " has gang instructions: a case must assert a PodGroup";
    }
    cases += count;
  }
  std::cout << cases << " catalog cases\n";
}

// The CustomResourceDefinitions of the YAML files under `dir`.
std::vector<Json> CrdsIn(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<Json> crds;
  for (const std::string& file : files) {
    auto docs = ReadYamlFile(file);
    EXPECT_TRUE(docs.ok()) << file << ": " << docs.status();
    if (!docs.ok()) continue;
    for (const Json& doc : *docs) {
      if (doc.value("kind", "") == "CustomResourceDefinition") crds.push_back(doc);
    }
  }
  return crds;
}

// openAPIV3Schema of every served version of the CRDs under `dir`, by
// "group/version/Kind".
std::map<std::string, Json> CrdSchemas(const std::string& dir) {
  std::map<std::string, Json> schemas;
  for (const Json& crd : CrdsIn(dir)) {
    const Json& spec = crd["spec"];
    for (const Json& v : spec.value("versions", Json::array())) {
      if (!v.contains("schema")) continue;
      schemas[absl::StrCat(spec["group"].get<std::string>(), "/", v["name"].get<std::string>(), "/",
                           spec["names"]["kind"].get<std::string>())] =
          v["schema"]["openAPIV3Schema"];
    }
  }
  return schemas;
}

// The built-in kinds' schemas (Pod, Deployment, Job, ...) as a real
// kube-apiserver serves them, by "group/version/Kind": catalog/schemas/core,
// written by scripts/extract-core-schemas in the shape of an
// openAPIV3Schema.
std::map<std::string, Json> CoreSchemas() {
  std::map<std::string, Json> schemas;
  for (const auto& e : fs::directory_iterator(kCatalog + "/schemas/core")) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    Json schema = Json::parse(in);
    for (const Json& k : schema.at("x-kubernetes-group-version-kind")) {
      schemas[absl::StrCat(k["group"].get<std::string>(), "/", k["version"].get<std::string>(), "/",
                           k["kind"].get<std::string>())] = schema;
    }
  }
  return schemas;
}

// Lints every definition whose root kind has a schema in `schemas` and
// returns the kinds linted.
std::set<std::string> LintAgainst(const std::map<std::string, Json>& schemas) {
  std::set<std::string> linted;
  for (const std::string& file : DefinitionFiles()) {
    auto parsed = definitions::LoadDefinitionFiles(file).value();
    EXPECT_TRUE(parsed[0].definition.has_value()) << file;
    if (!parsed[0].definition) continue;
    const auto& def = *parsed[0].definition;
    std::string kind =
        absl::StrCat(def.root.kind->group, "/", def.root.kind->version, "/", def.root.kind->kind);
    auto it = schemas.find(kind);
    if (it == schemas.end()) continue;
    linted.insert(kind);
    for (const Finding& f : definitions::LintAgainstSchema(def, it->second)) {
      ADD_FAILURE() << def.name << ": " << f.ToString();
    }
  }
  return linted;
}

// Every jq path a definition of a built-in kind reads from the workload
// exists in the API server's schema of that kind.
TEST(CatalogTest, PathsExistInTheBuiltInSchemas) {
  auto core = CoreSchemas();
  EXPECT_EQ(core.size(), 7u) << "catalog/schemas/core: run scripts/extract-core-schemas";
  std::set<std::string> linted = LintAgainst(core);
  const char* filter = std::getenv("WM_CATALOG_FILTER");
  if (filter == nullptr || *filter == '\0') {
    for (const auto& [kind, schema] : core) {
      EXPECT_TRUE(linted.contains(kind)) << "no definition for the built-in schema of " << kind;
    }
  }
  std::cout << linted.size() << " definitions checked against a built-in schema\n";
}

// The same against the frameworks' real CRDs (external data).
TEST(CatalogTest, PathsExistInTheRealCrdSchemas) {
  WM_REQUIRE_CRDS_DIR(crds, "the frameworks' real CRDs");
  auto schemas = CrdSchemas(crds);
  for (const auto& [kind, schema] : CoreSchemas()) {
    EXPECT_FALSE(schemas.contains(kind)) << kind << " has both a CRD and a built-in schema";
  }
  std::set<std::string> linted = LintAgainst(schemas);
  EXPECT_GT(linted.size(), 20u);
  std::cout << linted.size() << " definitions checked against their CRD's schema\n";
}

const std::string kTestbedCrds = std::string(WM_SOURCE_DIR) + "/integration_tests/testbed/crds";

// Every group/version/Kind our catalog names (roots, children, additional
// child kinds) outside the API groups kube-apiserver serves itself.
std::set<std::string> CatalogCustomKinds() {
  static const std::set<std::string> kBuiltInGroups = {
      "", "apps", "batch", "autoscaling", "policy", "networking.k8s.io"};
  std::set<std::string> kinds;
  auto add = [&](const Gvk& k) {
    if (!kBuiltInGroups.contains(k.group)) kinds.insert(absl::StrCat(k.ApiVersion(), "/", k.kind));
  };
  for (const std::string& file : DefinitionFiles()) {
    auto parsed = definitions::LoadDefinitionFiles(file).value();
    if (!parsed[0].definition) continue;
    const auto& def = *parsed[0].definition;
    if (def.root.kind) add(*def.root.kind);
    for (const auto& child : def.children) {
      if (child.kind) add(*child.kind);
    }
    for (const auto& k : def.additional_child_kinds) add(k);
  }
  return kinds;
}

// The testbed serves every kind the catalog covers from CRDs we wrote
// (integration_tests/testbed/crds), so that the demo and the integration
// tests need nothing outside the repository: each served, with a status
// subresource, under a schema that keeps every field.
TEST(CatalogTest, TestbedCrdsServeEveryKindOfTheCatalog) {
  std::set<std::string> served;
  for (const Json& crd : CrdsIn(kTestbedCrds)) {
    const Json& spec = crd["spec"];
    std::string group = spec["group"], plural = spec["names"]["plural"];
    EXPECT_EQ(crd["metadata"]["name"], plural + "." + group);
    int storage = 0;
    for (const Json& v : spec["versions"]) {
      std::string name = v["name"];
      storage += v.value("storage", false) ? 1 : 0;
      EXPECT_TRUE(v.value("served", false)) << plural << " " << name;
      EXPECT_TRUE(v.contains("subresources") && v["subresources"].contains("status"))
          << plural << " " << name << " has no status subresource";
      EXPECT_EQ(v["schema"]["openAPIV3Schema"].value("x-kubernetes-preserve-unknown-fields", false),
                true)
          << plural << " " << name;
      served.insert(absl::StrCat(group, "/", name, "/", spec["names"]["kind"].get<std::string>()));
    }
    EXPECT_EQ(storage, 1) << plural << ": exactly one storage version";
  }
  for (const std::string& kind : CatalogCustomKinds()) {
    EXPECT_TRUE(served.contains(kind)) << kind << " has no CRD in " << kTestbedCrds;
  }
}

// Where the real CRDs are at hand, ours agree with them on what clients see:
// plural, scope and the served versions the catalog uses.
TEST(CatalogTest, TestbedCrdsAgreeWithTheRealOnes) {
  WM_REQUIRE_CRDS_DIR(real_dir, "the frameworks' real CRDs");
  std::map<std::string, Json> real;  // "group/Kind" -> spec
  for (const Json& crd : CrdsIn(real_dir)) {
    real[absl::StrCat(crd["spec"]["group"].get<std::string>(), "/",
                      crd["spec"]["names"]["kind"].get<std::string>())] = crd["spec"];
  }
  int compared = 0;
  for (const Json& crd : CrdsIn(kTestbedCrds)) {
    const Json& ours = crd["spec"];
    std::string key = absl::StrCat(ours["group"].get<std::string>(), "/",
                                   ours["names"]["kind"].get<std::string>());
    auto it = real.find(key);
    if (it == real.end()) continue;  // a framework whose CRDs are not in the set
    ++compared;
    EXPECT_EQ(ours["names"]["plural"], it->second["names"]["plural"]) << key;
    EXPECT_EQ(ours["scope"], it->second["scope"]) << key;
    for (const Json& v : ours["versions"]) {
      bool served = false;
      for (const Json& r : it->second["versions"]) {
        served |= r["name"] == v["name"] && r.value("served", false);
      }
      EXPECT_TRUE(served) << key << " " << v["name"] << " is not served by the real CRD";
    }
  }
  EXPECT_GT(compared, 20);
}

// Every recorded real-operator frame whose state is known resolves, with our
// catalog's definition for its kind, to statuses that contain that state.
TEST(CatalogTest, ReplayRecordedFramesWithOurCatalog) {
  WM_REQUIRE_CONFORMANCE_DIR(recorded, "recorded", "upstream's recorded operator frames");
  std::map<std::string, std::shared_ptr<const CompiledDefinition>> by_kind;
  for (const std::string& file : DefinitionFiles()) {
    std::string error;
    auto def = Compile(file, &error);
    if (def == nullptr) continue;
    const auto& k = *def->definition->root.kind;
    by_kind[absl::StrCat(k.ApiVersion(), "/", k.kind)] = def;
  }
  int frames = 0, contained = 0, uncovered = 0;
  for (const auto& e : fs::recursive_directory_iterator(recorded)) {
    if (e.path().extension() != ".yaml") continue;
    Json recording = ReadYamlFile(e.path().string()).value().at(0);
    int index = 0;
    for (const Json& event : recording["events"]) {
      ++index;
      if (event.value("kind", "") != "STATE" || event.value("state", "") == "Undefined") continue;
      const Json& object = event["object"];
      auto it =
          by_kind.find(absl::StrCat(object.value("apiVersion", ""), "/", object.value("kind", "")));
      if (it == by_kind.end()) {
        ++uncovered;
        continue;
      }
      ++frames;
      std::vector<std::string> got;
      absl::Status s = Engine().Run([&](expressions::Session& session) {
        resolution::Evaluation eval(*it->second, session);
        auto status = resolution::EvaluateStatus(eval, eval.Load(object));
        if (!status.ok()) return status.status();
        for (auto m : status->matched) got.push_back(definitions::StatusName(m));
        return absl::OkStatus();
      });
      ASSERT_TRUE(s.ok()) << e.path() << " event " << index << ": " << s;
      bool has = std::find(got.begin(), got.end(), event["state"]) != got.end();
      contained += has;
      EXPECT_TRUE(has) << fs::relative(e.path(), recorded) << " event " << index << ": want "
                       << event["state"] << " in [" << absl::StrJoin(got, ",") << "] ("
                       << it->second->definition->name << ")";
    }
  }
  std::cout << contained << " of " << frames
            << " recorded frames (state not Undefined) contain the state with our catalog; "
            << uncovered << " frames of kinds we do not cover\n";
  EXPECT_GT(frames, 100);
  EXPECT_EQ(uncovered, 0);
}

}  // namespace
}  // namespace wm
