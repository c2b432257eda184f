#include "server/admission/karta_review.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/definitions/testing/karta_fixture.h"
#include "server/expressions/native_engine.h"

namespace wm::admission {
namespace {

using ::testing::HasSubstr;

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

Json Karta(const std::string& template_path) {
  return definitions::testing::KartaFixture("widgets", Gvk{"example.com", "v1", "Widget"},
                                            template_path);
}

std::string Review(const std::string& operation, const Json& object, Json old_object = nullptr) {
  Json request = {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
                  {"kind", {{"group", "run.ai"}, {"version", "v1alpha1"}, {"kind", "Karta"}}},
                  {"operation", operation},
                  {"object", object}};
  if (!old_object.is_null()) request["oldObject"] = std::move(old_object);
  return Json{{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"request", std::move(request)}}
      .dump();
}

TEST(KartaReviewTest, AValidKartaIsAllowed) {
  auto review = ReviewKarta(Review("CREATE", Karta(".spec.template")), Engine());
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_EQ(review->verdict, Verdict::kAllowed);
  const Json& response = review->review["response"];
  EXPECT_EQ(review->review["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(response["allowed"], true);
  EXPECT_FALSE(response.contains("status"));
}

TEST(KartaReviewTest, AnInvalidKartaIsDeniedWithItsFieldPaths) {
  auto review = ReviewKarta(Review("CREATE", Karta(".spec.template | input")), Engine());
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_EQ(review->verdict, Verdict::kDenied);
  const Json& response = review->review["response"];
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"]["code"], 422);
  EXPECT_EQ(response["status"]["reason"], "Invalid");
  std::string message = response["status"]["message"];
  EXPECT_THAT(message, HasSubstr("Karta \"widgets\" is invalid:\nerror: "
                                 "spec.structureDefinition.rootComponent.specDefinition."
                                 "podTemplateSpecPath: "));
}

TEST(KartaReviewTest, OnlyAChangedSpecIsJudged) {
  Json broken = Karta(".spec.template | input");
  Json relabelled = broken;
  relabelled["metadata"]["labels"] = {{"run.ai/karta-kind", "Widget"}};
  auto review = ReviewKarta(Review("UPDATE", relabelled, broken), Engine());
  ASSERT_TRUE(review.ok());
  EXPECT_EQ(review->verdict, Verdict::kAllowed);

  review = ReviewKarta(Review("UPDATE", broken, Karta(".spec.template")), Engine());
  ASSERT_TRUE(review.ok());
  EXPECT_EQ(review->verdict, Verdict::kDenied);

  review = ReviewKarta(Review("DELETE", broken), Engine());
  ASSERT_TRUE(review.ok());
  EXPECT_EQ(review->verdict, Verdict::kAllowed);
}

TEST(KartaReviewTest, WhatIsNotAnAdmissionReviewIsRefused) {
  for (const char* body : {"", "[]", "{\"kind\":\"AdmissionReview\"}",
                           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
                           "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":"
                           "\"AdmissionReview\",\"request\":{\"uid\":\"x\"}}"}) {
    auto review = ReviewKarta(body, Engine());
    EXPECT_TRUE(absl::IsInvalidArgument(review.status())) << body;
  }
  std::string deep(1000, '[');
  EXPECT_TRUE(absl::IsInvalidArgument(ReviewKarta(deep, Engine()).status()));
}

}  // namespace
}  // namespace wm::admission
