#include "server/definitions/testing/karta_fixture.h"

namespace wm::definitions::testing {

Json KartaFixture(const std::string& name, const Gvk& root, const std::string& pod_template_path) {
  return {
      {"apiVersion", "run.ai/v1alpha1"},
      {"kind", "Karta"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"structureDefinition",
         {{"rootComponent",
           {{"name", "root"},
            {"kind", {{"group", root.group}, {"version", root.version}, {"kind", root.kind}}},
            {"statusDefinition",
             {{"statusMappings",
               {{"running", {{{"byConditions", {{{"type", "Running"}, {"status", "True"}}}}}}}}}}},
            {"specDefinition", {{"podTemplateSpecPath", pod_template_path}}}}}}}}}};
}

}  // namespace wm::definitions::testing
