#include "server/common/json_merge_patch.h"

#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace wm {
namespace {

// RFC 7386's own examples (appendix A), and a few of our shapes: the
// result must be nlohmann's merge_patch's, which pod templates got before.
TEST(MergePatchTest, AgreesWithTheRfcExamplesAndNlohmann) {
  const char* const kCases[][3] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", "null", "null"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"a":1,"e":null})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
      {R"({"metadata":{"labels":{"x":"1"}},"spec":{"a":1}})",
       R"({"metadata":{"annotations":{"k":"v"},"labels":{"y":"2","x":null}},"z":0})",
       R"({"metadata":{"annotations":{"k":"v"},"labels":{"y":"2"}},"spec":{"a":1},"z":0})"},
  };
  for (const auto& [target_text, patch_text, want] : kCases) {
    Json target = Json::parse(target_text);
    const Json patch = Json::parse(patch_text);
    Json by_nlohmann = target;
    by_nlohmann.merge_patch(patch);
    MergePatch(target, patch);
    EXPECT_EQ(target, Json::parse(want)) << target_text << " + " << patch_text;
    EXPECT_EQ(target, by_nlohmann) << target_text << " + " << patch_text;
  }
}

// Large interleaved objects: one merge per level, not one insertion per
// member (2 * 10^5 members into 2 * 10^5: about 10^10 moves that way). The
// keys are zero-padded so that building the two objects appends.
TEST(MergePatchTest, MergesLargeInterleavedObjects) {
  Json target = Json::object();
  Json patch = Json::object();
  constexpr int kMembers = 200000;
  for (int i = 0; i < kMembers; ++i) {
    target[absl::StrFormat("k%07d", 2 * i)] = i;
    patch[absl::StrFormat("k%07d", 2 * i + 1)] = -i;
  }
  patch["k0000000"] = nullptr;
  patch["k0000002"] = "changed";
  MergePatch(target, patch);
  EXPECT_EQ(target.size(), 2u * kMembers - 1);
  EXPECT_FALSE(target.contains("k0000000"));
  EXPECT_EQ(target["k0000002"], "changed");
  EXPECT_EQ(target["k0000003"], -1);
  EXPECT_EQ(target["k0000004"], 2);
}

}  // namespace
}  // namespace wm
