// The Karta operator role against the testbed's real apiserver: labels and
// conditions through the status subresource, a Warning event per finding,
// CRDExists following CRDs as they come, and nothing written when nothing
// changed.
#include "server/controllers/karta_controller.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration_tests/kube/testbed_fixture.h"
#include "server/common/json_path.h"
#include "server/definitions/testing/karta_fixture.h"
#include "server/expressions/native_engine.h"
#include "server/kube/testing/eventually.h"
#include "server/sources/definition_set.h"

namespace wm::controllers {
namespace {

using ::testing::HasSubstr;
using ::wm::kube::testing::Eventually;
using ::wm::testing::SchemalessCrd;
using ::wm::testing::Testbed;

constexpr absl::Duration kWait = absl::Seconds(30);
const std::string kKartas = "/apis/run.ai/v1alpha1/kartas";
const std::string kCrds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

expressions::Engine& Engine() {
  static expressions::Engine* engine = expressions::NewNativeEngine().value().release();
  return *engine;
}

// A group of this test run's own: Kartas and CRDs are cluster-scoped and
// the testbed is shared.
std::string UniqueGroup() {
  static absl::BitGen random;
  return absl::StrCat("op", absl::Uniform<uint32_t>(random, 0, 1u << 30), ".test.run.ai");
}

Json Karta(const std::string& name, const Gvk& root,
           const std::string& pod_template_path = ".spec.template") {
  return definitions::testing::KartaFixture(name, root, pod_template_path);
}

Json Crd(const Gvk& gvk, const std::string& plural) {
  return SchemalessCrd(gvk, plural, gvk.kind == "Widget" ? "widget" : "gizmo");
}

// The controller of one test, over its own cache, leading unless told.
class Operator {
 public:
  Operator()
      : cache_(Testbed::Get().admin(), {}),
        controller_(Testbed::Get().admin(), cache_, Engine(), [this] { return leading_.load(); },
                    {.instance = "karta-controller-test"}) {
    cache_.AddHandler(
        [this](const Gvk& gvk, const kube::Change& change) { controller_.OnChange(gvk, change); });
    cache_.AddDiscoveryHandler([this] { controller_.ResyncAll(); });
    EXPECT_TRUE(cache_.Start({sources::KartaGvk()}).ok());
    EXPECT_TRUE(Eventually([&] { return cache_.HasSynced(sources::KartaGvk()); }, kWait));
    controller_.Start();
  }
  ~Operator() {
    controller_.Stop();
    cache_.Stop();
  }
  KartaController& controller() { return controller_; }
  kube::ClusterCache& cache() { return cache_; }
  void Lead(bool leading) { leading_ = leading; }

 private:
  std::atomic<bool> leading_{true};
  kube::ClusterCache cache_;
  KartaController controller_;
};

Json Get(const std::string& name) {
  absl::StatusOr<Json> karta = Testbed::Get().Call("GET", kKartas + "/" + name);
  return karta.ok() ? *karta : Json();
}

// The condition of `type` on Karta `name`, or null.
Json ConditionOf(const Json& karta, const std::string& type) {
  const Json* conditions = Find(karta, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return nullptr;
  for (const Json& c : *conditions) {
    if (FindString(c, {"type"}) == type) return c;
  }
  return nullptr;
}

bool ConditionIs(const std::string& name, const std::string& type, const std::string& status) {
  Json karta = Get(name);
  Json condition = ConditionOf(karta, type);
  return !condition.is_null() && FindString(condition, {"status"}) == status &&
         condition["observedGeneration"] == karta["metadata"]["generation"];
}

// The events about Karta `name` (in "default", where events about
// cluster-scoped objects go).
std::vector<Json> EventsAbout(const std::string& name) {
  absl::StatusOr<Json> list = Testbed::Get().Call(
      "GET", "/api/v1/namespaces/default/events?fieldSelector=" +
                 kube::QueryEscape("involvedObject.kind=Karta,involvedObject.name=" + name));
  std::vector<Json> events;
  if (list.ok()) {
    for (const Json& e : (*list)["items"]) events.push_back(e);
  }
  return events;
}

bool operator==(const KartaController::Counts& a, const KartaController::Counts& b) {
  return a.label_writes == b.label_writes && a.status_writes == b.status_writes &&
         a.events == b.events;
}

// The controller's counts once they have not moved for a second (it has
// looked at every Karta of the shared testbed, not only this test's).
KartaController::Counts Settled(KartaController& controller) {
  KartaController::Counts last = controller.counts();
  for (int quiet = 0; quiet < 4;) {
    absl::SleepFor(absl::Milliseconds(250));
    KartaController::Counts now = controller.counts();
    quiet = now == last ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

TEST(KartaControllerIntegrationTest, AValidKartaGetsItsKindAsLabelsAndReady) {
  Testbed& tb = Testbed::Get();
  Operator op;
  Gvk widget{UniqueGroup(), "v1", "Widget"};
  ASSERT_TRUE(tb.Call("POST", kCrds, Crd(widget, "widgets")).ok());
  std::string name = "widgets-" + widget.group;
  ASSERT_TRUE(tb.Call("POST", kKartas, Karta(name, widget)).ok());

  ASSERT_TRUE(Eventually([&] { return ConditionIs(name, "Ready", "True"); }, kWait))
      << Get(name).dump(2);
  Json karta = Get(name);
  EXPECT_EQ(karta["metadata"]["labels"]["run.ai/karta-group"], widget.group);
  EXPECT_EQ(karta["metadata"]["labels"]["run.ai/karta-version"], "v1");
  EXPECT_EQ(karta["metadata"]["labels"]["run.ai/karta-kind"], "Widget");
  EXPECT_EQ(FindString(ConditionOf(karta, "Validated"), {"status"}), "True");
  EXPECT_EQ(FindString(ConditionOf(karta, "CRDExists"), {"status"}), "True");
  // The status went through the status subresource, by our field manager.
  bool status_by_us = false;
  for (const Json& entry : karta["metadata"]["managedFields"]) {
    status_by_us = status_by_us || (entry.value("manager", "") == "workloadmapd" &&
                                    entry.value("subresource", "") == "status");
  }
  EXPECT_TRUE(status_by_us) << karta["metadata"]["managedFields"].dump(2);
  EXPECT_TRUE(EventsAbout(name).empty());

  // The root kind changes: the labels follow.
  Json patch = {
      {"spec", {{"structureDefinition", {{"rootComponent", {{"kind", {{"version", "v2"}}}}}}}}}};
  ASSERT_TRUE(tb.Call("PATCH", kKartas + "/" + name, patch, "application/merge-patch+json").ok());
  ASSERT_TRUE(Eventually(
      [&] {
        return Get(name)["metadata"]["labels"].value("run.ai/karta-version", "") == "v2" &&
               ConditionIs(name, "CRDExists", "False");
      },
      kWait))
      << Get(name).dump(2);
  EXPECT_THAT(FindString(ConditionOf(Get(name), "CRDExists"), {"message"}),
              HasSubstr("version not served; served versions: v1"));
  ASSERT_TRUE(tb.Call("DELETE", kKartas + "/" + name).ok());
  ASSERT_TRUE(tb.Call("DELETE", kCrds + "/widgets." + widget.group).ok());
}

TEST(KartaControllerIntegrationTest, AnInvalidKartaGetsValidatedFalseAndOneEventPerFinding) {
  Testbed& tb = Testbed::Get();
  Operator op;
  Gvk widget{UniqueGroup(), "v1", "Widget"};
  std::string name = "broken-" + widget.group;
  Json broken = Karta(name, widget, definitions::testing::kRefusedPodTemplatePath);
  ASSERT_TRUE(tb.Call("POST", kKartas, broken).ok());

  ASSERT_TRUE(Eventually([&] { return ConditionIs(name, "Validated", "False"); }, kWait))
      << Get(name).dump(2);
  Json karta = Get(name);
  std::string message = FindString(ConditionOf(karta, "Validated"), {"message"});
  EXPECT_THAT(
      message,
      HasSubstr("spec.structureDefinition.rootComponent.specDefinition.podTemplateSpecPath"));
  EXPECT_EQ(FindString(ConditionOf(karta, "Ready"), {"status"}), "False");
  // Its kind is still labelled, so a consumer that looks it up finds it
  // and sees why it is not Ready.
  EXPECT_EQ(karta["metadata"]["labels"]["run.ai/karta-kind"], "Widget");

  ASSERT_TRUE(Eventually([&] { return !EventsAbout(name).empty(); }, kWait));
  std::vector<Json> events = EventsAbout(name);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "Warning");
  EXPECT_EQ(events[0]["reason"], "ValidationFailed");
  EXPECT_THAT(events[0]["message"].get<std::string>(), HasSubstr("podTemplateSpecPath"));
  EXPECT_EQ(events[0]["involvedObject"]["uid"], karta["metadata"]["uid"]);

  // A second, new finding: one more event, the first not repeated.
  Json patch = {{"spec",
                 {{"structureDefinition",
                   {{"rootComponent",
                     {{"scaleDefinition", {{"replicasPath", ".spec.replicas | input"}}}}}}}}}};
  ASSERT_TRUE(tb.Call("PATCH", kKartas + "/" + name, patch, "application/merge-patch+json").ok());
  ASSERT_TRUE(Eventually([&] { return EventsAbout(name).size() == 2; }, kWait))
      << EventsAbout(name).size();
  ASSERT_TRUE(tb.Call("DELETE", kKartas + "/" + name).ok());
}

TEST(KartaControllerIntegrationTest, CrdExistsTurnsTrueWhenTheCrdIsApplied) {
  Testbed& tb = Testbed::Get();
  Operator op;
  Gvk gizmo{UniqueGroup(), "v1", "Gizmo"};
  std::string name = "gizmos-" + gizmo.group;
  ASSERT_TRUE(tb.Call("POST", kKartas, Karta(name, gizmo)).ok());
  ASSERT_TRUE(Eventually([&] { return ConditionIs(name, "CRDExists", "False"); }, kWait))
      << Get(name).dump(2);
  EXPECT_THAT(FindString(ConditionOf(Get(name), "CRDExists"), {"message"}),
              HasSubstr(gizmo.group + "/v1/Gizmo: not served"));
  EXPECT_EQ(FindString(ConditionOf(Get(name), "Ready"), {"status"}), "False");

  ASSERT_TRUE(tb.Call("POST", kCrds, Crd(gizmo, "gizmos")).ok());
  ASSERT_TRUE(Eventually([&] { return ConditionIs(name, "Ready", "True"); }, kWait))
      << Get(name).dump(2);
  EXPECT_EQ(FindString(ConditionOf(Get(name), "CRDExists"), {"status"}), "True");
  ASSERT_TRUE(tb.Call("DELETE", kKartas + "/" + name).ok());
  ASSERT_TRUE(tb.Call("DELETE", kCrds + "/gizmos." + gizmo.group).ok());
}

// No status churn, no event storm: once a Karta says the truth, resyncs,
// discoveries and a restarted operator (a new leader) write nothing.
TEST(KartaControllerIntegrationTest, NothingIsRewrittenWhenNothingChanged) {
  Testbed& tb = Testbed::Get();
  Gvk widget{UniqueGroup(), "v1", "Widget"};
  ASSERT_TRUE(tb.Call("POST", kCrds, Crd(widget, "widgets")).ok());
  std::string valid = "valid-" + widget.group, broken = "broken-" + widget.group;
  Json bad = Karta(broken, widget, definitions::testing::kRefusedPodTemplatePath);
  ASSERT_TRUE(tb.Call("POST", kKartas, Karta(valid, widget)).ok());
  ASSERT_TRUE(tb.Call("POST", kKartas, bad).ok());
  std::string valid_version, broken_version;
  {
    Operator op;
    ASSERT_TRUE(Eventually(
        [&] {
          return ConditionIs(valid, "Ready", "True") && ConditionIs(broken, "Validated", "False") &&
                 EventsAbout(broken).size() == 1;
        },
        kWait));
    valid_version = Get(valid)["metadata"]["resourceVersion"];
    broken_version = Get(broken)["metadata"]["resourceVersion"];
    KartaController::Counts settled = Settled(op.controller());
    // Resyncs and a discovery (a CRD of no Karta's kind comes and goes).
    for (int i = 0; i < 5; ++i) op.controller().ResyncAll();
    Gvk other{UniqueGroup(), "v1", "Gizmo"};
    ASSERT_TRUE(tb.Call("POST", kCrds, Crd(other, "gizmos")).ok());
    op.cache().Reconcile();
    ASSERT_TRUE(tb.Call("DELETE", kCrds + "/gizmos." + other.group).ok());
    absl::SleepFor(absl::Seconds(2));
    KartaController::Counts after = op.controller().counts();
    EXPECT_EQ(after.label_writes, settled.label_writes);
    EXPECT_EQ(after.status_writes, settled.status_writes);
    EXPECT_EQ(after.events, settled.events);
  }
  {
    // Another operator, as a new leader would be: it reads what is
    // reported from the objects and has nothing to add.
    Operator op;
    op.controller().ResyncAll();
    absl::SleepFor(absl::Seconds(2));
    EXPECT_EQ(op.controller().counts().status_writes, 0);
    EXPECT_EQ(op.controller().counts().label_writes, 0);
    EXPECT_EQ(op.controller().counts().events, 0);
  }
  EXPECT_EQ(Get(valid)["metadata"]["resourceVersion"], valid_version);
  EXPECT_EQ(Get(broken)["metadata"]["resourceVersion"], broken_version);
  EXPECT_EQ(EventsAbout(broken).size(), 1u);
  ASSERT_TRUE(tb.Call("DELETE", kKartas + "/" + valid).ok());
  ASSERT_TRUE(tb.Call("DELETE", kKartas + "/" + broken).ok());
  ASSERT_TRUE(tb.Call("DELETE", kCrds + "/widgets." + widget.group).ok());
}

TEST(KartaControllerIntegrationTest, AReplicaThatDoesNotLeadWritesNothingUntilItLeads) {
  Testbed& tb = Testbed::Get();
  Operator op;
  op.Lead(false);
  Gvk widget{UniqueGroup(), "v1", "Widget"};
  std::string name = "follower-" + widget.group;
  ASSERT_TRUE(tb.Call("POST", kKartas, Karta(name, widget)).ok());
  absl::SleepFor(absl::Seconds(2));
  EXPECT_TRUE(ConditionOf(Get(name), "Validated").is_null());
  EXPECT_FALSE(Get(name)["metadata"].contains("labels"));
  op.Lead(true);
  op.controller().ResyncAll();  // what the daemon does when it starts leading
  ASSERT_TRUE(Eventually([&] { return ConditionIs(name, "Validated", "True"); }, kWait));
  ASSERT_TRUE(tb.Call("DELETE", kKartas + "/" + name).ok());
}

// The operator's threads at once (scripts/test runs it under TSan too):
// the cache's thread queueing changes, the elector flipping leadership and
// resyncing, a reader of the counts, the worker writing. When it settles,
// every Karta tells the truth and no finding was reported twice (events
// come after the status that records them: a flip between the two loses
// the notice, never doubles it).
TEST(KartaControllerStressTest, ChangesResyncsAndLeadershipFlipsWhileTheWorkerWrites) {
  Testbed& tb = Testbed::Get();
  Operator op;
  Gvk widget{UniqueGroup(), "v1", "Widget"};
  ASSERT_TRUE(tb.Call("POST", kCrds, Crd(widget, "widgets")).ok());
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    for (int n = 0; !stop; ++n) {
      op.Lead(n % 4 != 0);
      if (n % 4 != 0) op.controller().ResyncAll();
      absl::SleepFor(absl::Milliseconds(10));
    }
  });
  threads.emplace_back([&] {
    while (!stop) {
      (void)op.controller().counts();
      absl::SleepFor(absl::Milliseconds(1));
    }
  });
  constexpr int kEach = 8;
  std::vector<std::string> valid, broken;
  for (int i = 0; i < kEach; ++i) {
    valid.push_back(absl::StrCat("valid-", i, "-", widget.group));
    broken.push_back(absl::StrCat("broken-", i, "-", widget.group));
    ASSERT_TRUE(tb.Call("POST", kKartas, Karta(valid.back(), widget)).ok());
    ASSERT_TRUE(tb.Call("POST", kKartas,
                        Karta(broken.back(), widget, definitions::testing::kRefusedPodTemplatePath))
                    .ok());
  }
  // Changes while it works: an annotation each (a new resourceVersion, the
  // same generation).
  for (const std::string& name : valid) {
    Json patch = {{"metadata", {{"annotations", {{"stress", "1"}}}}}};
    ASSERT_TRUE(tb.Call("PATCH", kKartas + "/" + name, patch, "application/merge-patch+json").ok());
  }
  absl::SleepFor(absl::Seconds(1));
  stop = true;
  for (std::thread& thread : threads) thread.join();
  op.Lead(true);
  op.controller().ResyncAll();

  for (const std::string& name : valid) {
    EXPECT_TRUE(Eventually([&] { return ConditionIs(name, "Ready", "True"); }, kWait)) << name;
    EXPECT_EQ(Get(name)["metadata"]["labels"]["run.ai/karta-kind"], "Widget");
    EXPECT_TRUE(EventsAbout(name).empty()) << name;
  }
  for (const std::string& name : broken) {
    EXPECT_TRUE(Eventually([&] { return ConditionIs(name, "Validated", "False"); }, kWait)) << name;
    EXPECT_LE(EventsAbout(name).size(), 1u) << name;
  }
  for (const std::string& name : valid) ASSERT_TRUE(tb.Call("DELETE", kKartas + "/" + name).ok());
  for (const std::string& name : broken) ASSERT_TRUE(tb.Call("DELETE", kKartas + "/" + name).ok());
  ASSERT_TRUE(tb.Call("DELETE", kCrds + "/widgets." + widget.group).ok());
}

}  // namespace
}  // namespace wm::controllers
