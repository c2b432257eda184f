// The registry with an engine that compiles cheaply (the native one):
// every definition is compiled as it is added, so a compile error shows at
// load, whatever the origin.

#include "server/definitions/registry.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/expressions/native_engine.h"

namespace wm::definitions {
namespace {

std::string KartaWithStatusExpression(const std::string& name, const std::string& expression) {
  return "apiVersion: run.ai/v1alpha1\n"
         "kind: Karta\n"
         "metadata:\n"
         "  name: " +
         name +
         "\n"
         "spec:\n"
         "  structureDefinition:\n"
         "    rootComponent:\n"
         "      name: root\n"
         "      kind: {group: example.com, version: v1, kind: " +
         name +
         "}\n"
         "      statusDefinition:\n"
         "        statusMappings:\n"
         "          running:\n"
         "          - byExpression: {expression: '" +
         expression + "', expectedResult: x}\n";
}

TEST(RegistryTest, ACheapEngineCompilesAtLoadAndReportsCompileErrorsThen) {
  auto engine = expressions::NewNativeEngine();
  ASSERT_TRUE(engine.ok());
  Registry registry(**engine);
  ASSERT_TRUE(registry
                  .AddDocuments({{"good.yaml", KartaWithStatusExpression("Good", ".status.x")},
                                 {"bad.yaml", KartaWithStatusExpression("Bad", "nosuchfunction")}},
                                Origin::kCatalog)
                  .ok());
  // The catalog origin is compiled on first use with a costly engine; here
  // the bad one is rejected at once, naming the field and gojq's reason.
  ASSERT_EQ(registry.rejected().size(), 1u);
  EXPECT_EQ(registry.rejected()[0].name, "Bad");
  ASSERT_FALSE(registry.rejected()[0].findings.empty());
  std::string finding = registry.rejected()[0].findings[0].ToString();
  EXPECT_THAT(finding, ::testing::HasSubstr("function not defined: nosuchfunction/0"));
  EXPECT_TRUE(registry.ForKind({"example.com", "v1", "Good"}).ok());
}

}  // namespace
}  // namespace wm::definitions
