// Replays the frames upstream recorded from real operators (conformance
// data): resolving each STATE frame's object with the upstream definition
// named by the recording must give matched statuses that contain the
// recorded state. Frames whose matched statuses equal upstream's recorded
// `phases` exactly are counted and the differences listed.

#include <filesystem>
#include <iostream>
#include <map>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "server/common/testing/optional_input.h"
#include "server/resolution/status.h"
#include "server/resolution/test_support.h"

namespace wm::resolution {
namespace {

std::vector<std::string> RecordingFiles(const std::string& recorded_dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(recorded_dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class ReplayTest : public testing::EngineTest {};

TEST_P(ReplayTest, RecordedStatesAreMatched) {
  WM_REQUIRE_CONFORMANCE_DIR(recorded_dir, "recorded", "upstream's recorded operator frames");
  WM_REQUIRE_CONFORMANCE_DIR(upstream, "upstream-catalog", "upstream's catalog");
  std::map<std::string, std::shared_ptr<const definitions::CompiledDefinition>> definitions;
  int frames = 0, exact = 0, contained = 0;
  std::vector<std::string> differences;
  for (const std::string& file : RecordingFiles(recorded_dir)) {
    Json recording = ReadYamlFile(file).value().at(0);
    std::string name = recording["kartaName"];
    auto& def = definitions[name];
    if (!def) def = testing::Upstream(upstream, name, engine());
    ASSERT_NE(def, nullptr) << name;
    int index = 0;
    for (const Json& event : recording["events"]) {
      ++index;
      if (event.value("kind", "") != "STATE") continue;
      ++frames;
      std::vector<std::string> got;
      testing::WithEvaluation(
          *def,
          [&](Evaluation& eval) {
            auto status = EvaluateStatus(eval, eval.Load(event["object"]));
            ASSERT_TRUE(status.ok()) << file << " event " << index << ": " << status.status();
            for (auto s : status->matched) got.push_back(definitions::StatusName(s));
          },
          engine());
      std::string state = event["state"];
      bool has_state = std::find(got.begin(), got.end(), state) != got.end();
      EXPECT_TRUE(has_state) << file << " event " << index << ": want " << state << " in ["
                             << absl::StrJoin(got, ",") << "]";
      contained += has_state;
      std::vector<std::string> phases = event["phases"].get<std::vector<std::string>>();
      if (phases == got) {
        ++exact;
      } else {
        differences.push_back(absl::StrCat(
            std::filesystem::relative(file, recorded_dir).string(), " event ", index,
            ": upstream [", absl::StrJoin(phases, ","), "] ours [", absl::StrJoin(got, ","), "]"));
      }
    }
  }
  std::cout << GetParam() << ": " << contained << " of " << frames
            << " frames contain the recorded state\n";
  std::cout << GetParam() << ": " << exact << " of " << frames << " frames equal upstream\n";
  for (const auto& d : differences) std::cout << "  differs: " << d << "\n";
  EXPECT_GT(frames, 100);
}

INSTANTIATE_TEST_SUITE_P(Engines, ReplayTest, testing::EngineNames(), testing::EngineTestName);

}  // namespace
}  // namespace wm::resolution
