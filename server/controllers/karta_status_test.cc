#include "server/controllers/karta_status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::controllers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1796000000);

definitions::CheckedDefinition Checked(std::vector<Finding> findings) {
  definitions::CheckedDefinition checked;
  checked.name = "jobsets";
  checked.readable = true;
  checked.root_kind = Gvk{"jobset.x-k8s.io", "v1alpha2", "JobSet"};
  checked.findings = std::move(findings);
  return checked;
}

Json Karta(Json status = nullptr) {
  Json object = {{"metadata", {{"name", "jobsets"}, {"resourceVersion", "41"}, {"generation", 3}}}};
  if (!status.is_null()) object["status"] = std::move(status);
  return object;
}

// The object as the apiserver would hold it after `patch` (a merge patch
// of labels or of status conditions).
Json Applied(Json object, const Json& patch) {
  object.merge_patch(patch);
  return object;
}

TEST(KartaStatusTest, AValidServedKartaIsReadyWithItsKindAsLabels) {
  DesiredKarta desired = Desire(3, Checked({}), "");
  ASSERT_EQ(desired.conditions.size(), 3u);
  EXPECT_EQ(desired.conditions[0], (Condition{"Validated", "True", "ValidationSucceeded", "", 3}));
  EXPECT_EQ(desired.conditions[1], (Condition{"CRDExists", "True", "CRDFound", "", 3}));
  EXPECT_EQ(desired.conditions[2], (Condition{"Ready", "True", "Ready", "", 3}));

  std::optional<Json> labels = LabelsPatch(Karta(), desired);
  ASSERT_TRUE(labels.has_value());
  EXPECT_EQ((*labels)["metadata"]["labels"], (Json{{"run.ai/karta-group", "jobset.x-k8s.io"},
                                                   {"run.ai/karta-version", "v1alpha2"},
                                                   {"run.ai/karta-kind", "JobSet"}}));
  EXPECT_EQ((*labels)["metadata"]["resourceVersion"], "41");
}

TEST(KartaStatusTest, FindingsWithTheirFieldPathsMakeValidatedFalseErrorsFirst) {
  DesiredKarta desired = Desire(
      3,
      Checked(
          {{Finding::Severity::kWarning, "spec.a", "looks odd"},
           {Finding::Severity::kError, "spec.structureDefinition.rootComponent.b", "is required"}}),
      "");
  const Condition& validated = desired.conditions[0];
  EXPECT_EQ(validated.status, "False");
  EXPECT_EQ(validated.reason, "ValidationFailed");
  EXPECT_EQ(validated.message,
            "error: spec.structureDefinition.rootComponent.b: is required\n"
            "warning: spec.a: looks odd");
  EXPECT_EQ(desired.conditions[2].status, "False");
  EXPECT_EQ(desired.conditions[2].message, "Validated is False");
}

TEST(KartaStatusTest, AnUnservedRootKindMakesCrdExistsFalseNamingTheKind) {
  DesiredKarta desired = Desire(1, Checked({}), "not served by the apiserver");
  EXPECT_EQ(desired.conditions[1].status, "False");
  EXPECT_EQ(desired.conditions[1].reason, "CRDNotFound");
  EXPECT_EQ(desired.conditions[1].message,
            "jobset.x-k8s.io/v1alpha2/JobSet: not served by the apiserver");
  EXPECT_EQ(desired.conditions[2].message, "CRDExists is False");
}

TEST(KartaStatusTest, ManyFindingsAreCountedNotAllListed) {
  std::vector<Finding> findings;
  for (int i = 0; i < 30; ++i) findings.push_back({Finding::Severity::kError, "spec", "bad\nline"});
  DesiredKarta desired = Desire(1, Checked(findings), "");
  EXPECT_EQ(desired.reported.size(), kMaxReportedFindings);
  EXPECT_THAT(desired.conditions[0].message, HasSubstr("error: spec: bad line\n"));
  EXPECT_THAT(desired.conditions[0].message, HasSubstr("and 10 more findings"));
}

TEST(KartaStatusTest, LabelsFollowTheRootKindAndGoWhenThereIsNone) {
  Json labelled = Karta();
  labelled["metadata"]["labels"] = {{"run.ai/karta-group", "jobset.x-k8s.io"},
                                    {"run.ai/karta-version", "v1alpha1"},
                                    {"run.ai/karta-kind", "JobSet"},
                                    {"team", "a"}};
  std::optional<Json> patch = LabelsPatch(labelled, Desire(1, Checked({}), ""));
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ((*patch)["metadata"]["labels"], (Json{{"run.ai/karta-version", "v1alpha2"}}));

  definitions::CheckedDefinition kindless = Checked({});
  kindless.root_kind.reset();
  patch = LabelsPatch(labelled, Desire(1, kindless, ""));
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ((*patch)["metadata"]["labels"], (Json{{"run.ai/karta-group", nullptr},
                                                  {"run.ai/karta-version", nullptr},
                                                  {"run.ai/karta-kind", nullptr}}));
  EXPECT_EQ(Desire(1, kindless, "").conditions[1].message, "the spec names no root component kind");
}

TEST(KartaStatusTest, NothingIsWrittenTwice) {
  DesiredKarta desired = Desire(3, Checked({{Finding::Severity::kError, "spec.x", "bad"}}), "");
  Json object = Karta();
  object = Applied(object, *LabelsPatch(object, desired));
  std::optional<Json> status = StatusPatch(object, desired, kNow);
  ASSERT_TRUE(status.has_value());
  object = Applied(object, *status);
  EXPECT_EQ(LabelsPatch(object, desired), std::nullopt);
  EXPECT_EQ(StatusPatch(object, desired, kNow + absl::Hours(1)), std::nullopt);
  EXPECT_TRUE(NewFindings(object, desired).empty());
}

TEST(KartaStatusTest, TransitionTimesMoveOnlyWithTheStatusAndOthersConditionsStay) {
  Json other = {{"type", "SomeoneElses"},
                {"status", "True"},
                {"reason", "Theirs"},
                {"message", ""},
                {"lastTransitionTime", "2026-01-01T00:00:00Z"}};
  Json object = Karta({{"conditions", Json::array({other})}});
  DesiredKarta first = Desire(3, Checked({}), "not served");
  object = Applied(object, *StatusPatch(object, first, kNow));
  ASSERT_EQ(object["status"]["conditions"].size(), 4u);
  EXPECT_EQ(object["status"]["conditions"][0], other);

  // The CRD appears an hour later: CRDExists and Ready change, Validated
  // keeps its time.
  DesiredKarta second = Desire(3, Checked({}), "");
  object = Applied(object, *StatusPatch(object, second, kNow + absl::Hours(1)));
  std::map<std::string, std::string> times;
  for (const Json& c : object["status"]["conditions"]) {
    times[c["type"]] = c["lastTransitionTime"];
  }
  EXPECT_EQ(times["Validated"], "2026-11-30T00:53:20Z");
  EXPECT_EQ(times["CRDExists"], "2026-11-30T01:53:20Z");
  EXPECT_EQ(times["Ready"], "2026-11-30T01:53:20Z");
  EXPECT_EQ(times["SomeoneElses"], "2026-01-01T00:00:00Z");
}

TEST(KartaStatusTest, ANewGenerationIsWrittenEvenWhenNothingElseChanged) {
  Json object = Karta();
  object = Applied(object, *StatusPatch(object, Desire(3, Checked({}), ""), kNow));
  std::optional<Json> patch = StatusPatch(object, Desire(4, Checked({}), ""), kNow);
  ASSERT_TRUE(patch.has_value());
  for (const Json& c : (*patch)["status"]["conditions"]) EXPECT_EQ(c["observedGeneration"], 4);
}

TEST(KartaStatusTest, OnlyFindingsNotYetListedAreNew) {
  Finding old_finding{Finding::Severity::kError, "spec.x", "bad"};
  Finding new_finding{Finding::Severity::kWarning, "spec.y", "odd"};
  Json object = Karta();
  object = Applied(object, *StatusPatch(object, Desire(3, Checked({old_finding}), ""), kNow));
  DesiredKarta desired = Desire(4, Checked({old_finding, new_finding}), "");
  std::vector<Finding> fresh = NewFindings(object, desired);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(definitions::FindingLine(fresh[0]), "warning: spec.y: odd");
}

}  // namespace
}  // namespace wm::controllers
