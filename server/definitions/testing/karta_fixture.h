#ifndef WM_SERVER_DEFINITIONS_TESTING_KARTA_FIXTURE_H_
#define WM_SERVER_DEFINITIONS_TESTING_KARTA_FIXTURE_H_

#include <string>

#include "server/common/gvk.h"
#include "server/common/json.h"

namespace wm::definitions::testing {

// The smallest Karta the checks accept, for tests: one root component of
// kind `root` ("running" when its Running condition is True), its pod
// template at `pod_template_path`. A path that reads input (".spec.template
// | input") makes it one the checks refuse, at
// spec.structureDefinition.rootComponent.specDefinition.podTemplateSpecPath.
Json KartaFixture(const std::string& name, const Gvk& root,
                  const std::string& pod_template_path = ".spec.template");

// The path the checks refuse in KartaFixture.
inline constexpr char kRefusedPodTemplatePath[] = ".spec.template | input";

}  // namespace wm::definitions::testing

#endif  // WM_SERVER_DEFINITIONS_TESTING_KARTA_FIXTURE_H_
