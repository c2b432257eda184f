#include "server/definitions/parse.h"

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/testing/optional_input.h"
#include "server/common/yaml_json.h"
#include "server/definitions/compiled_definition.h"
#include "server/expressions/jq_engine.h"

namespace wm::definitions {
namespace {

using ::testing::HasSubstr;

std::string Describe(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) out += "  " + f.ToString() + "\n";
  return out;
}

class UpstreamCatalogTest : public ::testing::TestWithParam<std::string> {};

// Every upstream definition, current and older, validates and compiles.
TEST_P(UpstreamCatalogTest, ValidatesAndCompiles) {
  static auto* engine = expressions::NewJqEngine({.workers = 1}).value().release();
  WM_REQUIRE_CONFORMANCE_DIR(dir, GetParam(), "an upstream catalog");
  auto parsed = LoadDefinitionFiles(dir);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_GE(parsed->size(), 8u);
  for (auto& p : *parsed) {
    ASSERT_TRUE(p.definition.has_value()) << p.source << "\n" << Describe(p.findings);
    for (const auto& f : p.findings) {
      EXPECT_FALSE(f.is_error()) << p.source << ": " << f.ToString();
    }
    std::vector<Finding> findings;
    auto compiled = CompileDefinition(*p.definition, *engine, &findings);
    EXPECT_TRUE(compiled.ok()) << p.source << ": " << compiled.status() << "\n"
                               << Describe(findings);
  }
}

INSTANTIATE_TEST_SUITE_P(Conformance, UpstreamCatalogTest,
                         ::testing::Values("upstream-catalog", "upstream-catalog-older"));

TEST(ParseTest, PendingIsReadAsInitializingWithAWarning) {
  auto docs = ParseYamlDocuments(R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: x}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: g, version: v1, kind: K}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          pending: [{byPhase: Pending}]
)");
  ASSERT_TRUE(docs.ok());
  auto parsed = ParseDefinition((*docs)[0], Origin::kFile, "test");
  ASSERT_TRUE(parsed.definition.has_value()) << Describe(parsed.findings);
  const auto& init =
      parsed.definition->root.status->mappings[static_cast<int>(WorkloadStatus::kInitializing)];
  ASSERT_EQ(init.size(), 1u);
  EXPECT_EQ(init[0].by_phase, "Pending");
  ASSERT_EQ(parsed.findings.size(), 1u) << Describe(parsed.findings);
  EXPECT_FALSE(parsed.findings[0].is_error());
  EXPECT_EQ(parsed.findings[0].path,
            "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.pending");
}

TEST(ParseTest, AppliesCrdDefaultsForConditionFieldNames) {
  auto docs = ParseYamlDocuments(R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: x}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: g, version: v1, kind: K}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions}
        statusMappings: {}
)");
  auto parsed = ParseDefinition((*docs)[0], Origin::kFile, "test");
  ASSERT_TRUE(parsed.definition.has_value()) << Describe(parsed.findings);
  const auto& c = *parsed.definition->root.status->conditions;
  EXPECT_EQ(c.type_field_name, "type");
  EXPECT_EQ(c.status_field_name, "status");
  EXPECT_EQ(c.message_field_name, "message");
  EXPECT_EQ(c.reason_field_name, "reason");
}

TEST(ParseTest, SchemaErrorsNameTheField) {
  auto docs = ParseYamlDocuments(R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: x}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: g, version: v1}
      instanceIdPath: 3
      statusDefinition: {statusMappings: {}}
      suspendDefinition: {suspendActions: [], resumeActions: [{path: .a, value: "1"}]}
    childComponents:
    - name: a
      ownerRef: root
      podSelector: {componentTypeSelector: {keyPath: ""}}
      specDefinitio: {}
)");
  auto parsed = ParseDefinition((*docs)[0], Origin::kFile, "test");
  EXPECT_FALSE(parsed.definition.has_value());
  std::string all = Describe(parsed.findings);
  EXPECT_THAT(all, HasSubstr("spec.structureDefinition.rootComponent.kind.kind: required value"));
  EXPECT_THAT(all, HasSubstr("spec.structureDefinition.rootComponent.instanceIdPath: must be "
                             "string, not integer"));
  EXPECT_THAT(all, HasSubstr("suspendDefinition.suspendActions: must have at least 1 item"));
  EXPECT_THAT(all, HasSubstr("childComponents[0].podSelector.componentTypeSelector.keyPath: must "
                             "be at least 1 character"));
  EXPECT_THAT(all, HasSubstr("warning: spec.structureDefinition.childComponents[0].specDefinitio: "
                             "unknown field"));
}

TEST(ParseTest, RequiresSpec) {
  auto parsed = ParseDefinition(
      Json::parse(R"({"apiVersion":"run.ai/v1alpha1","kind":"Karta","metadata":{"name":"x"}})"),
      Origin::kFile, "test");
  EXPECT_FALSE(parsed.definition.has_value());
  ASSERT_EQ(parsed.findings.size(), 1u);
  EXPECT_EQ(parsed.findings[0].ToString(), "spec: required value");
}

TEST(ParseTest, RejectsOtherKinds) {
  auto parsed =
      ParseDefinition(Json::parse(R"({"apiVersion":"v1","kind":"Pod"})"), Origin::kFile, "test");
  EXPECT_FALSE(parsed.definition.has_value());
  EXPECT_THAT(parsed.findings[0].message, HasSubstr("not a Karta definition"));
}

}  // namespace
}  // namespace wm::definitions
