// Replays the frames upstream recorded from real operators (conformance
// data) through the whole resolution, not the status alone: each STATE
// frame's object resolved with the upstream definition the recording names.
// Counts the frames resolved whole, resolved partially (listing which
// component errors, and how often) and failed, and prints them. A partial
// frame must still carry the recorded state among its matched statuses: a
// failing component must not cost the status.

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "server/common/testing/optional_input.h"
#include "server/resolution/resolver.h"
#include "server/resolution/test_support.h"

namespace wm::resolution {
namespace {

class FullReplayTest : public testing::EngineTest {};

TEST_P(FullReplayTest, RecordedFramesResolveWholeOrPartially) {
  WM_REQUIRE_CONFORMANCE_DIR(recorded, "recorded", "upstream's recorded operator frames");
  WM_REQUIRE_CONFORMANCE_DIR(upstream, "upstream-catalog", "upstream's catalog");
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(recorded)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());

  std::map<std::string, std::shared_ptr<const definitions::CompiledDefinition>> definitions;
  int frames = 0, whole = 0, partial = 0, failed = 0;
  std::map<std::string, int> component_errors;  // "karta component field: message" -> frames
  std::vector<std::string> failures;
  for (const std::string& file : files) {
    Json recording = ReadYamlFile(file).value().at(0);
    std::string name = recording["kartaName"];
    auto& def = definitions[name];
    if (!def) def = testing::Upstream(upstream, name, engine());
    ASSERT_NE(def, nullptr) << name;
    std::string where = std::filesystem::relative(file, recorded).string();
    int index = 0;
    for (const Json& event : recording["events"]) {
      ++index;
      if (event.value("kind", "") != "STATE") continue;
      ++frames;
      WorkloadInput input{&event["object"]};
      auto resolved = ResolveWorkload(*def, engine(), input);
      if (!resolved.ok()) {
        ++failed;
        failures.push_back(
            absl::StrCat(where, " event ", index, ": ", resolved.status().message()));
        continue;
      }
      std::vector<std::string> errors = ComponentErrors(*resolved);
      if (errors.empty()) {
        ++whole;
        continue;
      }
      ++partial;
      for (const auto& e : errors) ++component_errors[absl::StrCat(name, " ", e)];
      const auto& matched = resolved->status().matched_statuses();
      std::string state = event["state"];
      EXPECT_NE(std::find(matched.begin(), matched.end(), state), matched.end())
          << where << " event " << index << ": a partial answer lost the status: want " << state
          << " in [" << absl::StrJoin(matched, ",") << "]";
    }
  }
  std::cout << GetParam() << ": full resolution of " << frames << " recorded frames: " << whole
            << " whole, " << partial << " partial, " << failed << " failed\n";
  for (const auto& [error, count] : component_errors) {
    std::cout << GetParam() << ":   partial (" << count << " frames): " << error << "\n";
  }
  for (const auto& f : failures) std::cout << "  failed: " << f << "\n";
  EXPECT_GT(frames, 100);
  EXPECT_EQ(failed, 0) << absl::StrJoin(failures, "\n");
}

INSTANTIATE_TEST_SUITE_P(Engines, FullReplayTest, testing::EngineNames(), testing::EngineTestName);

}  // namespace
}  // namespace wm::resolution
