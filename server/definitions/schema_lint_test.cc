#include "server/definitions/schema_lint.h"

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/yaml_json.h"
#include "server/definitions/parse.h"

namespace wm::definitions {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::vector<std::string> Paths(const std::string& expression) {
  std::vector<std::string> out;
  for (const auto& p : ReadPaths(expression)) out.push_back(absl::StrJoin(p, "."));
  return out;
}

TEST(ReadPathsTest, FollowsChainsPipesAndElementFunctions) {
  EXPECT_THAT(Paths(".spec.replicatedJobs[].template.spec.template"),
              UnorderedElementsAre("spec.replicatedJobs.[].template.spec.template"));
  EXPECT_THAT(Paths(".spec.jobs[] | (.replicas // 1) * .template.spec.parallelism"),
              UnorderedElementsAre("spec.jobs.[]", "spec.jobs.[].replicas",
                                   "spec.jobs.[].template.spec.parallelism"));
  EXPECT_THAT(Paths("(.status.rjs // []) | any(.active > 0) and all(.failed == 0)"),
              UnorderedElementsAre("status.rjs", "status.rjs.[].active", "status.rjs.[].failed"));
  EXPECT_THAT(Paths(R"(.metadata.labels["a/b"] == "x")"),
              UnorderedElementsAre("metadata.labels.a/b"));
  EXPECT_THAT(Paths("[.status.conditions[]? | select(.type == \"Ready\")] | length"),
              UnorderedElementsAre("status.conditions.[]", "status.conditions.[].type"));
  EXPECT_THAT(Paths(".spec.services | to_entries[] | .key"), UnorderedElementsAre("spec.services"));
  EXPECT_THAT(Paths("{requests: .spec.resources, name}"),
              UnorderedElementsAre("spec.resources", "name"));
  EXPECT_THAT(Paths(".spec as $s | .status.x"), UnorderedElementsAre("spec", "status.x"));
  EXPECT_THAT(Paths("if .a then .b else .c end"), UnorderedElementsAre("a", "b", "c"));
  EXPECT_THAT(Paths("any(.spec.x[]?; .y == 1)"), UnorderedElementsAre("spec.x.[]"));
  EXPECT_THAT(Paths(".x | with_entries(.value)"), UnorderedElementsAre("x"));
  EXPECT_THAT(Paths("$v.a.b"), UnorderedElementsAre());
  EXPECT_THAT(Paths(".spec.s[(.spec.s // {} | keys[])].x"),
              UnorderedElementsAre("spec.s", "spec.s.[].x"));
  // `and`/`or` are words to the scanner: the paths after them count too.
  EXPECT_THAT(Paths(".status.a == 1 or .status.b.c and .spec.d"),
              UnorderedElementsAre("status.a", "status.b.c", "spec.d"));
}

TEST(LintTest, ReportsFieldsTheSchemaLacks) {
  Json schema = ParseYamlDocuments(R"(
type: object
properties:
  spec:
    type: object
    properties:
      replicas: {type: integer}
      roles:
        type: array
        items:
          type: object
          properties:
            name: {type: string}
            template: {type: object, x-kubernetes-preserve-unknown-fields: true}
      labels: {type: object, additionalProperties: {type: string}}
  status:
    type: object
    properties:
      phase: {type: string}
)")
                    .value()[0];
  Json def = ParseYamlDocuments(R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: t}
spec:
  structureDefinition:
    rootComponent:
      name: r
      kind: {group: g, version: v1, kind: Thing}
      statusDefinition:
        phaseDefinition: {path: .status.phse}
        statusMappings:
          running:
          - byExpression:
              expression: .spec.labels.x == "1" and .metadata.name != ""
              expectedResult: "true"
    childComponents:
    - name: role
      ownerRef: r
      instanceIdPath: .spec.roles[].name
      specDefinition: {podTemplateSpecPath: ".spec.roles[].template.anything.goes"}
      scaleDefinition: {replicasPath: ".spec.roles[] | .replica"}
      podSelector:
        componentInstanceSelector: {idPath: .metadata.labels.role}
)")
                 .value()[0];
  auto parsed = ParseDefinition(def, Origin::kFile, "t");
  ASSERT_TRUE(parsed.definition.has_value());
  auto findings = LintAgainstSchema(*parsed.definition, schema);
  std::string all;
  for (const auto& f : findings) all += f.ToString() + "\n";
  ASSERT_EQ(findings.size(), 2u) << all;
  EXPECT_THAT(all, HasSubstr("scaleDefinition.replicasPath: reads .spec.roles[].replica, but the "
                             "Thing schema (v1) has no field \"replica\""));
  EXPECT_THAT(all, HasSubstr("phaseDefinition.path: reads .status.phse"));
}

}  // namespace
}  // namespace wm::definitions
