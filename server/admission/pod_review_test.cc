#include "server/admission/pod_review.h"

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::admission {
namespace {

using controllers::GangScheduler;
using controllers::PodGroupMembership;
using ::testing::HasSubstr;

std::string Review(const std::string& operation, const Json& pod) {
  return Json{{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"request",
               {{"uid", "u-1"},
                {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                {"operation", operation},
                {"namespace", "ml"},
                {"object", pod}}}}
      .dump();
}

Json Pod() {
  return Json::parse(R"({"metadata": {"generateName": "train-w-0-",
                                      "labels": {"app": "x"}},
                         "spec": {"schedulerName": "volcano"}})");
}

// The JSONPatch of an answer, decoded.
Json PatchOf(const PodReview& review) {
  std::string text;
  EXPECT_TRUE(absl::Base64Unescape(review.review["response"]["patch"].get<std::string>(), &text));
  return Json::parse(text);
}

MembershipOf Fixed(std::optional<PodGroupMembership> membership, std::string* asked_namespace) {
  return [=](const Json&, const std::string& namespace_) {
    *asked_namespace = namespace_;
    return membership;
  };
}

TEST(PodReviewTest, APodBeingCreatedGetsItsSchedulersMarks) {
  std::string asked;
  auto review =
      ReviewPod(Review("CREATE", Pod()),
                Fixed(PodGroupMembership{GangScheduler::kVolcano, "pg-1", "workers"}, &asked));
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_TRUE(review->placed);
  EXPECT_EQ(asked, "ml");
  EXPECT_EQ(review->review["response"]["uid"], "u-1");
  EXPECT_EQ(review->review["response"]["allowed"], true);
  EXPECT_EQ(review->review["response"]["patchType"], "JSONPatch");
  // No annotations yet: the map is added whole.
  EXPECT_EQ(PatchOf(*review), Json::parse(R"([{"op": "add", "path": "/metadata/annotations",
      "value": {"scheduling.k8s.io/group-name": "pg-1", "volcano.sh/task-spec": "workers"}}])"));

  // Labels present: one key added, its "/" escaped.
  auto cosched =
      ReviewPod(Review("CREATE", Pod()),
                Fixed(PodGroupMembership{GangScheduler::kCoscheduling, "pg-1", ""}, &asked));
  ASSERT_TRUE(cosched.ok());
  EXPECT_EQ(PatchOf(*cosched), Json::parse(R"([{"op": "add",
      "path": "/metadata/labels/scheduling.x-k8s.io~1pod-group", "value": "pg-1"}])"));
}

TEST(PodReviewTest, OtherwiseThePodIsAdmittedAsItIs) {
  std::string asked;
  auto unknown = ReviewPod(Review("CREATE", Pod()), Fixed(std::nullopt, &asked));
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->placed);
  EXPECT_EQ(unknown->review["response"]["allowed"], true);
  EXPECT_FALSE(unknown->review["response"].contains("patch"));

  Json marked = Pod();
  marked["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] = "pg-1";
  auto already =
      ReviewPod(Review("CREATE", marked),
                Fixed(PodGroupMembership{GangScheduler::kCoscheduling, "pg-1", ""}, &asked));
  ASSERT_TRUE(already.ok());
  EXPECT_FALSE(already->placed);

  asked = "untouched";
  auto update = ReviewPod(Review("UPDATE", Pod()),
                          Fixed(PodGroupMembership{GangScheduler::kKai, "pg-1", ""}, &asked));
  ASSERT_TRUE(update.ok());
  EXPECT_FALSE(update->placed);
  EXPECT_EQ(asked, "untouched");
}

TEST(PodReviewTest, ABodyThatIsNoReviewIsRefused) {
  std::string asked;
  auto review = ReviewPod("{\"kind\": \"Pod\"}", Fixed(std::nullopt, &asked));
  ASSERT_FALSE(review.ok());
  EXPECT_THAT(review.status().message(), HasSubstr("AdmissionReview"));
}

}  // namespace
}  // namespace wm::admission
