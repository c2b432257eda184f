#include "server/definitions/validate.h"

#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/yaml_json.h"
#include "server/definitions/compiled_definition.h"
#include "server/definitions/parse.h"
#include "server/expressions/jq_engine.h"

namespace wm::definitions {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A valid definition with every kind of field the rules look at.
constexpr char kBase[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: base}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: example.com, version: v1, kind: Train}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running: [{byExpression: {expression: .status.ok, expectedResult: "true"}}]
      suspendDefinition:
        suspendActions: [{path: .spec.suspend, value: "true"}]
        resumeActions: [{path: .spec.suspend, value: "false"}]
    childComponents:
    - name: worker
      ownerRef: root
      kind: {group: "", version: v1, kind: Pod}
      specDefinition: {podTemplateSpecPath: ".spec.roles[].template"}
      scaleDefinition: {replicasPath: ".spec.roles[].replicas"}
      instanceIdPath: ".spec.roles[].name"
      podSelector:
        componentTypeSelector: {keyPath: ".metadata.labels.role"}
        componentInstanceSelector: {idPath: ".metadata.labels.role"}
  optimizationInstructions:
    gangScheduling:
      podGroups:
      - name: all
        members: [{componentName: worker, groupByKeyPaths: [.metadata.labels.role]}]
      podGroup:
        name: all
        subGroups: [{componentName: worker}]
)";

struct Case {
  const char* name;
  std::function<void(Json&)> mutate;
  const char* path;
  const char* message;
};

Json& Root(Json& d) { return d["spec"]["structureDefinition"]["rootComponent"]; }
Json& Child(Json& d) { return d["spec"]["structureDefinition"]["childComponents"][0]; }

std::vector<Finding> Errors(const Json& doc) {
  auto parsed = ParseDefinition(doc, Origin::kFile, "test");
  std::vector<Finding> errors;
  for (auto& f : parsed.findings) {
    if (f.is_error()) errors.push_back(f);
  }
  if (parsed.definition) {
    for (auto& f : Validate(*parsed.definition)) {
      if (f.is_error()) errors.push_back(f);
    }
  }
  return errors;
}

class ValidateRuleTest : public ::testing::TestWithParam<Case> {};

TEST(ValidateTest, BaseIsValid) {
  Json doc = ParseYamlDocuments(kBase).value()[0];
  EXPECT_TRUE(Errors(doc).empty());
}

TEST_P(ValidateRuleTest, ReportsFieldPath) {
  const Case& c = GetParam();
  Json doc = ParseYamlDocuments(kBase).value()[0];
  c.mutate(doc);
  std::vector<Finding> errors = Errors(doc);
  std::string all;
  for (const auto& f : errors) all += f.ToString() + "\n";
  bool found = false;
  for (const auto& f : errors)
    found = found || (f.path == c.path && f.message.find(c.message) != std::string::npos);
  EXPECT_TRUE(found) << "want " << c.path << ": " << c.message << "\ngot:\n" << all;
}

const std::string kR = "spec.structureDefinition.rootComponent";
const std::string kC = "spec.structureDefinition.childComponents[0]";

INSTANTIATE_TEST_SUITE_P(
    Rules, ValidateRuleTest,
    ::testing::Values(
        Case{"DuplicateName", [](Json& d) { Child(d)["name"] = "root"; },
             "spec.structureDefinition.childComponents[0].name",
             "component name root is not unique"},
        Case{"RootKindWithoutGroup", [](Json& d) { Root(d)["kind"]["group"] = ""; },
             "spec.structureDefinition.rootComponent.kind", "root component must have full kind"},
        Case{"RootOwnerRef", [](Json& d) { Root(d)["ownerRef"] = "x"; },
             "spec.structureDefinition.rootComponent.ownerRef", "must not have an owner ref"},
        Case{"RootWithoutStatus", [](Json& d) { Root(d).erase("statusDefinition"); },
             "spec.structureDefinition.rootComponent.statusDefinition",
             "must have a status definition"},
        Case{"ChildWithoutOwner", [](Json& d) { Child(d).erase("ownerRef"); },
             "spec.structureDefinition.childComponents[0].ownerRef",
             "child component 'worker' has no owner ref"},
        Case{"ChildOwnerMissing", [](Json& d) { Child(d)["ownerRef"] = "ghost"; },
             "spec.structureDefinition.childComponents[0].ownerRef", "names no component"},
        Case{"TwoSpecShapes", [](Json& d) { Child(d)["specDefinition"]["podSpecPath"] = ".x"; },
             "spec.structureDefinition.childComponents[0].specDefinition",
             "more than one pod spec"},
        Case{"InstancePathWithoutSelector",
             [](Json& d) { Child(d)["podSelector"].erase("componentInstanceSelector"); },
             "spec.structureDefinition.childComponents[0].instanceIdPath",
             "has instance id path but no pod component instance selector"},
        Case{"SelectorWithoutInstancePath", [](Json& d) { Child(d).erase("instanceIdPath"); },
             "spec.structureDefinition.childComponents[0].podSelector.componentInstanceSelector",
             "but no instance id path"},
        Case{"Cycle",
             [](Json& d) {
               Json second = Child(d);
               second["name"] = "b";
               second["ownerRef"] = "worker";
               Child(d)["ownerRef"] = "b";
               d["spec"]["structureDefinition"]["childComponents"].push_back(second);
             },
             "spec.structureDefinition.childComponents[0].ownerRef",
             "ownership cycle: worker -> b"},
        Case{"GangMemberMissing",
             [](Json& d) {
               d["spec"]["optimizationInstructions"]["gangScheduling"]["podGroups"][0]["members"][0]
                ["componentName"] = "ghost";
             },
             "spec.optimizationInstructions.gangScheduling.podGroups[0].members[0].componentName",
             "member component 'ghost' not found"},
        Case{"SubGroupMissing",
             [](Json& d) {
               d["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"]["subGroups"][0]
                ["componentName"] = "ghost";
             },
             "spec.optimizationInstructions.gangScheduling.podGroup.subGroups[0].componentName",
             "subgroup component 'ghost' not found"},
        Case{"TypeSelectorEmpty",
             [](Json& d) { Child(d)["podSelector"]["componentTypeSelector"] = Json::object(); },
             "spec.structureDefinition.childComponents[0].podSelector.componentTypeSelector",
             "must set keyPath or matchLabels"},
        Case{"ValueWithoutKeyPath",
             [](Json& d) {
               Child(d)["podSelector"]["componentTypeSelector"] = {{"value", "x"},
                                                                   {"matchLabels", {{"a", "b"}}}};
             },
             "spec.structureDefinition.childComponents[0].podSelector.componentTypeSelector.value",
             "value requires keyPath"},
        Case{"EmptyMatchLabels",
             [](Json& d) {
               Child(d)["podSelector"]["componentTypeSelector"]["matchLabels"] = Json::object();
             },
             "spec.structureDefinition.childComponents[0].podSelector.componentTypeSelector."
             "matchLabels",
             "must have at least 1 entry"},
        Case{"ScaleWithoutPaths", [](Json& d) { Child(d)["scaleDefinition"] = Json::object(); },
             "spec.structureDefinition.childComponents[0].scaleDefinition", "sets no path"},
        Case{"EmptySuspendActions",
             [](Json& d) { Root(d)["suspendDefinition"]["resumeActions"] = Json::array(); },
             "spec.structureDefinition.rootComponent.suspendDefinition.resumeActions",
             "must have at least 1 item"},
        Case{"TopologyWithoutLevel",
             [](Json& d) {
               d["spec"]["optimizationInstructions"]["gangScheduling"]["podGroup"]["topology"] = {
                   {"topologyName", "t"},
                   {"requiredTopologyLevel", ""},
                   {"preferredTopologyLevel", ""}};
             },
             "spec.optimizationInstructions.gangScheduling.podGroup.topology",
             "set requiredTopologyLevel or preferredTopologyLevel"}),
    [](const auto& info) { return std::string(info.param.name); });

// Every blacklisted construct and blocked builtin, in every tagged field kind.
class ForbiddenExpressionTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ForbiddenExpressionTest, RejectedInEveryTaggedField) {
  const std::string expr = GetParam();
  std::vector<std::pair<std::function<void(Json&)>, std::string>> fields = {
      {[&](Json& d) { Child(d)["instanceIdPath"] = expr; }, kC + ".instanceIdPath"},
      {[&](Json& d) { Child(d)["specDefinition"]["podTemplateSpecPath"] = expr; },
       kC + ".specDefinition.podTemplateSpecPath"},
      {[&](Json& d) { Child(d)["scaleDefinition"]["replicasPath"] = expr; },
       kC + ".scaleDefinition.replicasPath"},
      {[&](Json& d) { Child(d)["podSelector"]["componentTypeSelector"]["keyPath"] = expr; },
       kC + ".podSelector.componentTypeSelector.keyPath"},
      {[&](Json& d) { Root(d)["statusDefinition"]["phaseDefinition"]["path"] = expr; },
       kR + ".statusDefinition.phaseDefinition.path"},
      {[&](Json& d) {
         Root(d)["statusDefinition"]["statusMappings"]["running"][0]["byExpression"]["expression"] =
             expr;
       },
       kR + ".statusDefinition.statusMappings.running[0].byExpression.expression"},
      {[&](Json& d) { Root(d)["suspendDefinition"]["suspendActions"][0]["path"] = expr; },
       kR + ".suspendDefinition.suspendActions[0].path"},
      {[&](Json& d) {
         d["spec"]["optimizationInstructions"]["gangScheduling"]["podGroups"][0]["members"][0]
          ["groupByKeyPaths"][0] = expr;
       },
       "spec.optimizationInstructions.gangScheduling.podGroups[0].members[0].groupByKeyPaths[0]"},
  };
  for (auto& [mutate, path] : fields) {
    Json doc = ParseYamlDocuments(kBase).value()[0];
    mutate(doc);
    auto errors = Errors(doc);
    bool found = false;
    for (const auto& f : errors) found = found || f.path == path;
    EXPECT_TRUE(found) << expr << " at " << path;
  }
}

// ExpressionProblems (what `wmctl eval` checks) says what Validate says in
// the field.
TEST_P(ForbiddenExpressionTest, ExpressionProblemsAreValidatesMessages) {
  const std::string expr = GetParam();
  Json doc = ParseYamlDocuments(kBase).value()[0];
  Child(doc)["instanceIdPath"] = expr;
  std::vector<std::string> in_field;
  for (const auto& f : Errors(doc)) {
    if (f.path == kC + ".instanceIdPath") in_field.push_back(f.message);
  }
  EXPECT_THAT(in_field, ::testing::Not(IsEmpty())) << expr;
  EXPECT_EQ(ExpressionProblems(expr), in_field) << expr;
}

INSTANTIATE_TEST_SUITE_P(Blacklist, ForbiddenExpressionTest,
                         ::testing::Values("del(.a)", "..", ".a = 1", ".a |= 1", ".a += 1",
                                           ".a -= 1", ".a *= 2", ".a /= 2", ".a %= 2", ".a //= 1",
                                           "range(3)", "[paths]", "recurse", "walk(.)", "repeat(.)",
                                           "def f: del(.x); f", "env.HOME", "$ENV.HOME", "input",
                                           "[inputs]", "input_filename", "$__loc__", "debug",
                                           "stderr", "halt", "halt_error"));

TEST(ValidateTest, ExpressionProblemsOfSizeAndSyntax) {
  EXPECT_THAT(ExpressionProblems(".a | .b"), IsEmpty());
  EXPECT_THAT(ExpressionProblems(""), ElementsAre("empty expression"));
  EXPECT_THAT(ExpressionProblems(std::string(kMaxExpressionBytes + 1, '.')),
              ElementsAre("expression is 16385 bytes; at most 16384 are allowed"));
  EXPECT_THAT(ExpressionProblems("\"\\(.a"), ElementsAre(::testing::StartsWith("invalid jq: ")));
  EXPECT_THAT(ExpressionProblems("del(.a) | range(3)"),
              ElementsAre("del function is not allowed", "range function is not allowed"));
}

TEST(ValidateTest, CompileErrorsNameTheField) {
  auto engine = expressions::NewJqEngine({.workers = 1}).value();
  Json doc = ParseYamlDocuments(kBase).value()[0];
  Child(doc)["scaleDefinition"]["replicasPath"] = ".spec.roles[] | .replicas +";
  auto parsed = ParseDefinition(doc, Origin::kFile, "test");
  ASSERT_TRUE(parsed.definition.has_value());
  std::vector<Finding> findings;
  auto compiled = CompileDefinition(*parsed.definition, *engine, &findings);
  ASSERT_FALSE(compiled.ok());
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.back().path, kC + ".scaleDefinition.replicasPath");
  EXPECT_THAT(findings.back().message, HasSubstr("jq does not compile"));
}

TEST(ValidateTest, ConsistencyWarnings) {
  Json doc = ParseYamlDocuments(kBase).value()[0];
  Child(doc)["scaleDefinition"]["replicasPath"] = ".spec.roles[].replicas // 1";
  auto parsed = ParseDefinition(doc, Origin::kFile, "test");
  auto findings = Validate(*parsed.definition);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_FALSE(findings[0].is_error());
  EXPECT_EQ(findings[0].path, kC + ".scaleDefinition.replicasPath");
  EXPECT_THAT(findings[0].message, HasSubstr("A[] | (.x // d)"));

  Child(doc)["scaleDefinition"]["replicasPath"] = ".spec.size";
  findings = Validate(*ParseDefinition(doc, Origin::kFile, "test").definition);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("yields a single value"));
}

// The worker has one instance per role (instanceIdPath `.spec.roles[].name`),
// so a replicasPath must iterate too; what counts as iterating is read from
// the expression's structure, subscripts included.
TEST(ValidateTest, GeneratorInSubscriptIndexIterates) {
  auto messages = [](const std::string& replicas_path) {
    Json doc = ParseYamlDocuments(kBase).value()[0];
    Child(doc)["scaleDefinition"]["replicasPath"] = replicas_path;
    std::vector<std::string> out;
    for (const auto& f : Validate(*ParseDefinition(doc, Origin::kFile, "test").definition)) {
      EXPECT_EQ(f.path, kC + ".scaleDefinition.replicasPath") << f.ToString();
      out.push_back(f.message);
    }
    return out;
  };
  // One value per key of .spec.x: no "yields a single value".
  EXPECT_THAT(messages(".spec.s[(.spec.x | keys[])]"), IsEmpty());
  EXPECT_THAT(messages(".spec.s[(.spec.x | keys[])].replicas"), IsEmpty());
  // `//` still collapses a generator, whether `X[]` or in a subscript index.
  EXPECT_THAT(messages(".spec.a[].x // 1"), ElementsAre(HasSubstr("A[] | (.x // d)")));
  EXPECT_THAT(messages(".spec.s[(.spec.x | keys[])] // 1"),
              ElementsAre(HasSubstr("A[] | (.x // d)")));
  // A single index, or an array construction, yields one value.
  EXPECT_THAT(messages(".spec.s[.spec.i]"), ElementsAre(HasSubstr("yields a single value")));
  EXPECT_THAT(messages("[.spec.a[]] | length"), ElementsAre(HasSubstr("yields a single value")));
}

}  // namespace
}  // namespace wm::definitions
