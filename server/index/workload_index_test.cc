// WorkloadIndex over an in-memory cluster whose stores the tests change:
// affected workloads, views and their revisions, events, resuming, errors,
// summaries and concurrent use.

#include "server/index/workload_index.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/common/json_path.h"
#include "server/common/yaml_json.h"
#include "server/definitions/registry.h"
#include "server/index/testing/fake_cluster.h"
#include "server/resolution/test_support.h"

namespace wm::index {
namespace {

namespace v1 = ::workloadmap::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::wm::index::testing::FakeCluster;

const Gvk kJobSet{"jobset.x-k8s.io", "v1alpha2", "JobSet"};
const Gvk kJob{"batch", "v1", "Job"};
const Gvk kPod = PodGvk();
const Gvk kWidget{"example.com", "v1", "Widget"};

expressions::Engine& Engine() { return resolution::testing::TestEngine(); }

// A definition whose phase expression fails on every object.
constexpr char kBrokenWidget[] = R"(
apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: example-com-widget-v1}
spec:
  structureDefinition:
    rootComponent:
      name: widget
      kind: {group: example.com, version: v1, kind: Widget}
      specDefinition:
        podSpecPath: .spec.pod
      scaleDefinition:
        replicasPath: .spec.replicas
      statusDefinition:
        phaseDefinition: {path: .status.phase | error("widget status is broken")}
        statusMappings: {running: [{byPhase: Running}]}
)";

// The built-in catalog (optionally without JobSet), plus `extra` documents.
std::shared_ptr<const definitions::Registry> MakeRegistry(bool with_jobset,
                                                          const std::string& extra = "") {
  auto registry = std::make_shared<definitions::Registry>(Engine());
  std::vector<std::pair<std::string, std::string>> documents;
  for (const auto& [name, text] : BuiltinCatalog()) {
    if (with_jobset || name.find("jobset") == std::string::npos) documents.emplace_back(name, text);
  }
  EXPECT_TRUE(registry->AddDocuments(documents, definitions::Origin::kCatalog).ok());
  if (!extra.empty()) {
    EXPECT_TRUE(registry->AddDocuments({{"extra.yaml", extra}}, definitions::Origin::kFile).ok());
  }
  EXPECT_THAT(registry->rejected(), IsEmpty());
  return registry;
}

// Registries are compiled on first use; the tests share them.
std::shared_ptr<const definitions::Registry> Catalog() {
  static auto* registry = new std::shared_ptr<const definitions::Registry>(MakeRegistry(true));
  return *registry;
}
std::shared_ptr<const definitions::Registry> CatalogWithoutJobSet() {
  static auto* registry = new std::shared_ptr<const definitions::Registry>(MakeRegistry(false));
  return *registry;
}

// Records every event it is given.
class Recorder {
 public:
  WorkloadIndex::Listener Listener() {
    return [this](const WorkloadEvent& event) {
      std::lock_guard lock(mu_);
      events_.push_back(event);
    };
  }
  std::vector<WorkloadEvent> Take() {
    std::lock_guard lock(mu_);
    return std::exchange(events_, {});
  }

 private:
  std::mutex mu_;
  std::vector<WorkloadEvent> events_;
};

std::vector<Json> SeedObjects() {
  auto docs =
      ReadYamlFile(std::string(WM_SOURCE_DIR) + "/integration_tests/seed/cluster-state.yaml");
  EXPECT_TRUE(docs.ok()) << docs.status();
  return docs.ok() ? *docs : std::vector<Json>{};
}

const Json& Find(const std::vector<Json>& objects, const std::string& kind,
                 const std::string& name) {
  for (const Json& o : objects) {
    if (o["kind"] == kind && o["metadata"]["name"] == name) return o;
  }
  ADD_FAILURE() << "no " << kind << " " << name;
  static const Json* none = new Json();
  return *none;
}

WorkloadKey Key(const Gvk& gvk, const std::string& name) {
  return {"test", gvk, "default/" + name};
}

const WorkloadKey kDemo = Key(kJobSet, "demo");
const std::vector<std::string> kJobs = {"demo-leader-0", "demo-worker-0", "demo-worker-1"};
const std::vector<std::string> kPods = {"demo-leader-0-0-x0l", "demo-worker-0-0-x0w",
                                        "demo-worker-1-0-x1w"};

const v1::ComponentSummary* Row(const v1::WorkloadSummary& summary, const std::string& instance) {
  for (const auto& row : summary.components()) {
    if (row.name() == "replicatedjob" && row.instance_id() == instance) return &row;
  }
  return nullptr;
}

// Events per workload key.
std::map<WorkloadKey, std::vector<WorkloadEvent>> ByKey(const std::vector<WorkloadEvent>& events) {
  std::map<WorkloadKey, std::vector<WorkloadEvent>> out;
  for (const WorkloadEvent& e : events) out[e.view->id].push_back(e);
  return out;
}

class WorkloadIndexTest : public ::testing::Test {
 protected:
  explicit WorkloadIndexTest(WorkloadIndex::Options options = {})
      : cluster_(Catalog()), index_(Engine(), options) {
    index_.AddCluster(&cluster_);
    index_.Start();
  }

  void FeedSeed() {
    for (const Json& o : seed_) cluster_.Put(index_, o);
    index_.WaitForIdle();
  }

  std::vector<Json> seed_ = SeedObjects();
  // Both outlive the index.
  Recorder recorder_;
  FakeCluster cluster_;
  WorkloadIndex index_;
};

// The demo JobSet as the seed gives it: leader 1/1, worker 2/2.
void ExpectRunningDemo(const WorkloadView& view) {
  ASSERT_TRUE(view.error.ok()) << view.error;
  ASSERT_NE(view.resolved, nullptr);
  EXPECT_EQ(view.name, "demo");
  EXPECT_EQ(view.uid, "a3f0c2d1-5b6e-4c7d-8e9f-0a1b2c3d4e5f");
  EXPECT_EQ(view.summary.definition(), "jobset-x-k8s-io-jobset-v1alpha2");
  EXPECT_THAT(view.summary.matched_statuses(), ::testing::Contains("Running"));
  const v1::ComponentSummary* leader = Row(view.summary, "leader");
  const v1::ComponentSummary* worker = Row(view.summary, "worker");
  ASSERT_NE(leader, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(leader->replicas().desired(), 1);
  EXPECT_EQ(leader->replicas().current(), 1);
  EXPECT_EQ(leader->replicas().ready(), 1);
  EXPECT_EQ(worker->replicas().desired(), 2);
  EXPECT_EQ(worker->replicas().current(), 2);
  EXPECT_EQ(worker->replicas().ready(), 2);
}

TEST_F(WorkloadIndexTest, SeedResolvesWithJobsAndPodsBelowTheJobSet) {
  FeedSeed();
  auto demo = index_.Get(kDemo);
  ASSERT_NE(demo, nullptr);
  ExpectRunningDemo(*demo);
  // The Jobs and pods inside it are covered kinds too, but only the
  // JobSet has a view; they are resolved on request.
  EXPECT_THAT(index_.List(), ElementsAre(demo));
  for (const std::string& job : kJobs) {
    EXPECT_EQ(index_.Get(Key(kJob, job)), nullptr) << job;
    auto view = index_.ResolveNow(Key(kJob, job));
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_TRUE((*view)->error.ok()) << (*view)->error;
    EXPECT_EQ((*view)->revision, 0u);  // not published
  }
  for (const std::string& pod : kPods) {
    EXPECT_EQ(index_.Get(Key(kPod, pod)), nullptr) << pod;
    auto view = index_.ResolveNow(Key(kPod, pod));
    ASSERT_TRUE(view.ok()) << view.status();
  }
  EXPECT_EQ(index_.counters().resolution_errors, 0u);
}

// Pods before their Jobs before the JobSet, the reverse, and all at once:
// the same views.
TEST(WorkloadIndexOrderTest, FeedOrderDoesNotMatter) {
  std::vector<Json> seed = SeedObjects();
  ASSERT_THAT(seed, SizeIs(7));
  auto rank = [](const Json& o) {
    std::string kind = o["kind"];
    return kind == "Pod" ? 0 : kind == "Job" ? 1 : 2;
  };
  std::vector<Json> bottom_up = seed, top_down = seed;
  std::stable_sort(bottom_up.begin(), bottom_up.end(),
                   [&](const Json& a, const Json& b) { return rank(a) < rank(b); });
  std::stable_sort(top_down.begin(), top_down.end(),
                   [&](const Json& a, const Json& b) { return rank(a) > rank(b); });
  ASSERT_EQ(bottom_up.front()["kind"], "Pod");
  ASSERT_EQ(top_down.front()["kind"], "JobSet");

  struct Result {
    std::map<WorkloadKey, std::shared_ptr<const WorkloadView>> views;
  };
  auto run = [&](const std::vector<Json>& order, bool wait_each) {
    FakeCluster cluster(Catalog());
    WorkloadIndex index(Engine(), {});
    index.AddCluster(&cluster);
    index.Start();
    for (const Json& o : order) {
      cluster.Put(index, o);
      if (wait_each) index.WaitForIdle();
    }
    index.WaitForIdle();
    Result result;
    for (auto& view : index.List()) result.views[view->id] = view;
    return result;
  };
  std::vector<std::pair<std::string, Result>> results;
  results.emplace_back("bottom up", run(bottom_up, true));
  results.emplace_back("top down", run(top_down, true));
  results.emplace_back("bottom up, one batch", run(bottom_up, false));
  std::reverse(bottom_up.begin(), bottom_up.end());
  results.emplace_back("reverse of bottom up", run(bottom_up, true));

  for (const auto& [name, result] : results) {
    SCOPED_TRACE(name);
    // Whatever came first, only the JobSet is left with a view.
    ASSERT_THAT(result.views, SizeIs(1));
    ASSERT_TRUE(result.views.count(kDemo));
    ExpectRunningDemo(*result.views.at(kDemo));
    for (const auto& [key, view] : result.views) {
      ASSERT_NE(view->resolved, nullptr) << key.key << ": " << view->error;
      const auto& first = results.front().second.views.at(key);
      EXPECT_TRUE(
          google::protobuf::util::MessageDifferencer::Equals(*view->resolved, *first->resolved))
          << key.key << "\n"
          << view->resolved->DebugString() << "\nvs\n"
          << first->resolved->DebugString();
      EXPECT_EQ(view->labels, first->labels);
    }
  }
}

TEST_F(WorkloadIndexTest, PodNotReadyModifiesTheJobSetOnce) {
  FeedSeed();
  Recorder& recorder = recorder_;
  auto sub = index_.Subscribe(recorder.Listener(), 0);
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_THAT(sub->views, SizeIs(1));
  auto before = index_.Get(kDemo);

  Json pod = Find(seed_, "Pod", "demo-worker-0-0-x0w");
  pod["metadata"]["resourceVersion"] = "2000";
  for (Json& condition : pod["status"]["conditions"]) {
    if (condition["type"] == "Ready" || condition["type"] == "ContainersReady") {
      condition["status"] = "False";
    }
  }
  cluster_.Put(index_, pod);
  index_.WaitForIdle();

  auto events = ByKey(recorder.Take());
  ASSERT_THAT(events[kDemo], SizeIs(1));
  const WorkloadEvent& event = events[kDemo][0];
  EXPECT_EQ(event.type, v1::WorkloadEvent::MODIFIED);
  EXPECT_GT(event.revision, before->revision);
  EXPECT_EQ(event.view->revision, event.revision);
  auto after = index_.Get(kDemo);
  EXPECT_EQ(after, event.view);
  EXPECT_EQ(Row(after->summary, "worker")->replicas().ready(), 1);
  EXPECT_EQ(Row(after->summary, "worker")->replicas().current(), 2);
  EXPECT_EQ(Row(after->summary, "leader")->replicas().ready(), 1);

  // The pod and its Job have no views of their own: nothing else is published.
  EXPECT_THAT(events, SizeIs(1));

  // The same object again: resolved, nothing published.
  const uint64_t revision = index_.revision();
  const uint64_t resolutions = index_.counters().resolutions;
  cluster_.Put(index_, pod);
  index_.WaitForIdle();
  EXPECT_THAT(recorder.Take(), IsEmpty());
  EXPECT_EQ(index_.revision(), revision);
  EXPECT_GT(index_.counters().resolutions, resolutions);
  EXPECT_EQ(index_.Get(kDemo), after);
  index_.Unsubscribe(sub->id);
}

// A workload with many pods keeps their trees between resolutions
// (Options::pod_tree_cache_bytes): when one pod changes, only its tree is
// rebuilt, and the answer is the one an index without the cache gives.
TEST(WorkloadIndexPodTreeTest, ALargeWorkloadRebuildsOnlyTheChangedPodsTree) {
  FakeCluster with_cluster(Catalog()), without_cluster(Catalog());
  WorkloadIndex with(Engine(), {}), without(Engine(), {.pod_tree_cache_bytes = 0});
  with.AddCluster(&with_cluster);
  without.AddCluster(&without_cluster);
  with.Start();
  without.Start();
  std::vector<Json> objects = SeedObjects();
  Json extra = Find(objects, "Pod", "demo-worker-0-0-x0w");
  constexpr int kExtra = 40;  // 43 pods and 3 Jobs: past kPodTreeCacheMinObjects
  for (int i = 0; i < kExtra; ++i) {
    extra["metadata"]["name"] = absl::StrCat("demo-worker-0-extra-", i);
    extra["metadata"]["uid"] = absl::StrCat("extra-uid-", i);
    objects.push_back(extra);
  }
  auto put = [&](const Json& object) {
    with_cluster.Put(with, object);
    without_cluster.Put(without, object);
    with.WaitForIdle();
    without.WaitForIdle();
  };
  for (const Json& object : objects) put(object);
  auto view = with.Get(kDemo);
  ASSERT_NE(view, nullptr);
  ASSERT_TRUE(view->error.ok()) << view->error;
  EXPECT_EQ(Row(view->summary, "worker")->replicas().ready(), 2 + kExtra);
  const kube::DocumentCache::Stats before = with.pod_tree_cache_stats();
  EXPECT_EQ(before.trees, 3u + kExtra);
  EXPECT_EQ(without.pod_tree_cache_stats().trees, 0u);

  // One pod stops being ready: a new version of it, a new tree.
  Json sick = objects.back();
  sick["metadata"]["resourceVersion"] = "2000";
  for (Json& condition : sick["status"]["conditions"]) {
    if (condition["type"] == "Ready") condition["status"] = "False";
  }
  const uint64_t resolutions = with.counters().resolutions;
  put(sick);
  ASSERT_EQ(with.counters().resolutions, resolutions + 1);
  const kube::DocumentCache::Stats after = with.pod_tree_cache_stats();
  EXPECT_EQ(after.misses - before.misses, 1u);  // the sick pod's
  EXPECT_EQ(after.hits - before.hits, 2u + kExtra);
  view = with.Get(kDemo);
  auto reference = without.Get(kDemo);
  ASSERT_NE(view, nullptr);
  ASSERT_NE(reference, nullptr);
  EXPECT_EQ(Row(view->summary, "worker")->replicas().ready(), 1 + kExtra);
  EXPECT_EQ(Row(view->summary, "worker")->replicas().current(), 2 + kExtra);
  ASSERT_NE(view->resolved, nullptr);
  ASSERT_NE(reference->resolved, nullptr);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(*view->resolved, *reference->resolved));
  with.Stop();
  without.Stop();
}

TEST_F(WorkloadIndexTest, DeletingTheJobSetPublishesItsLastView) {
  FeedSeed();
  Recorder& recorder = recorder_;
  ASSERT_TRUE(index_.Subscribe(recorder.Listener(), 0).ok());
  auto last = index_.Get(kDemo);
  ASSERT_NE(last, nullptr);

  cluster_.Delete(index_, Find(seed_, "JobSet", "demo"));
  index_.WaitForIdle();

  auto events = ByKey(recorder.Take());
  ASSERT_THAT(events[kDemo], SizeIs(1));
  EXPECT_EQ(events[kDemo][0].type, v1::WorkloadEvent::DELETED);
  EXPECT_EQ(events[kDemo][0].view, last);
  EXPECT_GT(events[kDemo][0].revision, last->revision);
  EXPECT_EQ(index_.Get(kDemo), nullptr);
  // The Jobs have no covered owner any more: they are top-level workloads
  // now, published as ADDED; their pods are still inside them.
  EXPECT_THAT(index_.List(), SizeIs(3));
  for (const std::string& job : kJobs) {
    auto view = index_.Get(Key(kJob, job));
    ASSERT_NE(view, nullptr);
    ASSERT_THAT(events[Key(kJob, job)], SizeIs(1));
    EXPECT_EQ(events[Key(kJob, job)][0].type, v1::WorkloadEvent::ADDED);
  }
  for (const std::string& pod : kPods) EXPECT_EQ(index_.Get(Key(kPod, pod)), nullptr) << pod;
  // Deleting it again changes nothing.
  cluster_.Delete(index_, Find(seed_, "JobSet", "demo"));
  index_.WaitForIdle();
  EXPECT_THAT(recorder.Take(), IsEmpty());
}

TEST_F(WorkloadIndexTest, DefinitionsChangedRemovesAndReaddsTheJobSet) {
  FeedSeed();
  Recorder& recorder = recorder_;
  ASSERT_TRUE(index_.Subscribe(recorder.Listener(), 0).ok());
  auto last = index_.Get(kDemo);

  cluster_.SetDefinitions(CatalogWithoutJobSet(), index_);
  index_.WaitForIdle();
  auto events = ByKey(recorder.Take());
  ASSERT_THAT(events[kDemo], SizeIs(1));
  EXPECT_EQ(events[kDemo][0].type, v1::WorkloadEvent::DELETED);
  EXPECT_EQ(events[kDemo][0].view, last);
  EXPECT_EQ(index_.Get(kDemo), nullptr);
  for (const std::string& job : kJobs) {
    ASSERT_NE(index_.Get(Key(kJob, job)), nullptr) << job;
  }
  for (const std::string& pod : kPods) EXPECT_EQ(index_.Get(Key(kPod, pod)), nullptr) << pod;

  cluster_.SetDefinitions(Catalog(), index_);
  index_.WaitForIdle();
  events = ByKey(recorder.Take());
  ASSERT_THAT(events[kDemo], SizeIs(1));
  EXPECT_EQ(events[kDemo][0].type, v1::WorkloadEvent::ADDED);
  auto readded = index_.Get(kDemo);
  ASSERT_NE(readded, nullptr);
  ExpectRunningDemo(*readded);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(*readded->resolved, *last->resolved));
  // The Jobs are inside it again: their views are gone (DELETED).
  for (const std::string& job : kJobs) {
    EXPECT_EQ(index_.Get(Key(kJob, job)), nullptr) << job;
    ASSERT_THAT(events[Key(kJob, job)], SizeIs(1));
    EXPECT_EQ(events[Key(kJob, job)][0].type, v1::WorkloadEvent::DELETED);
  }

  // Unchanged definitions: every workload is resolved, nothing published.
  const uint64_t revision = index_.revision();
  index_.Resync("test");
  index_.WaitForIdle();
  EXPECT_THAT(recorder.Take(), IsEmpty());
  EXPECT_EQ(index_.revision(), revision);
  // An unknown cluster is ignored.
  index_.Resync("elsewhere");
  index_.WaitForIdle();
  EXPECT_EQ(index_.revision(), revision);
}

TEST_F(WorkloadIndexTest, ResolveNowAndCounters) {
  FeedSeed();
  auto now = index_.ResolveNow(kDemo);
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*(*now)->resolved,
                                                                 *index_.Get(kDemo)->resolved));
  EXPECT_EQ(index_.ResolveNow(Key(kJobSet, "nope")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(index_.ResolveNow({"elsewhere", kJobSet, "default/demo"}).status().code(),
            absl::StatusCode::kNotFound);
  WorkloadIndex::Counters counters = index_.counters();
  EXPECT_GE(counters.resolutions, 2u);  // the resolver's and ResolveNow's
  EXPECT_EQ(counters.changes, 7u);
  EXPECT_TRUE(index_.Idle());
  EXPECT_EQ(index_.FindCluster("test"), &cluster_);
  EXPECT_EQ(index_.FindCluster("elsewhere"), nullptr);
}

class WorkloadIndexHistoryTest : public WorkloadIndexTest {
 protected:
  WorkloadIndexHistoryTest() : WorkloadIndexTest({.history = 3}) {}

  // Publishes one MODIFIED event of the demo JobSet (a new label).
  void Touch(int n) {
    Json jobset = Find(seed_, "JobSet", "demo");
    jobset["metadata"]["labels"]["touch"] = absl::StrCat(n);
    cluster_.Put(index_, jobset);
    index_.WaitForIdle();
  }
};

TEST_F(WorkloadIndexHistoryTest, ResumeGetsTheLatestChangeOfEachWorkload) {
  FeedSeed();
  const uint64_t start = index_.revision();
  auto sub = index_.Subscribe(recorder_.Listener(), 0);
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->revision, start);
  EXPECT_THAT(sub->views, SizeIs(1));
  EXPECT_THAT(sub->backlog, IsEmpty());
  for (int n = 1; n <= 5; ++n) Touch(n);
  std::vector<WorkloadEvent> events = recorder_.Take();
  ASSERT_THAT(events, SizeIs(5));
  // Revisions increase by one per event.
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].revision, start + i + 1);
    EXPECT_EQ(events[i].view->revision, events[i].revision);
    EXPECT_EQ(events[i].type, v1::WorkloadEvent::MODIFIED);
    EXPECT_EQ(events[i].view->id, kDemo);
    EXPECT_EQ(events[i].view->labels.at("touch"), absl::StrCat(i + 1));
  }
  EXPECT_EQ(index_.revision(), events.back().revision);

  // Resuming after the third event, or from before all five: the demo
  // once, as it is now.
  Recorder resumed;
  auto resume = index_.Subscribe(resumed.Listener(), events[2].revision);
  ASSERT_TRUE(resume.ok()) << resume.status();
  EXPECT_THAT(resume->views, IsEmpty());
  ASSERT_THAT(resume->backlog, SizeIs(1));
  EXPECT_EQ(resume->backlog[0].type, v1::WorkloadEvent::MODIFIED);
  EXPECT_EQ(resume->backlog[0].revision, events[4].revision);
  EXPECT_EQ(resume->backlog[0].view, events[4].view);
  EXPECT_EQ(resume->revision, events[4].revision);
  auto from_start = index_.Subscribe([](const WorkloadEvent&) {}, start);
  ASSERT_TRUE(from_start.ok()) << from_start.status();
  ASSERT_THAT(from_start->backlog, SizeIs(1));
  EXPECT_EQ(from_start->backlog[0].view, events[4].view);
  index_.Unsubscribe(from_start->id);
  // At the current revision: nothing.
  auto current = index_.Subscribe([](const WorkloadEvent&) {}, index_.revision());
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_THAT(current->backlog, IsEmpty());
  index_.Unsubscribe(current->id);
  // Before the index's first revision, or ahead of it: OutOfRange.
  auto too_old = index_.Subscribe([](const WorkloadEvent&) {}, start - 1000);
  EXPECT_EQ(too_old.status().code(), absl::StatusCode::kOutOfRange) << too_old.status();
  EXPECT_THAT(too_old.status().message(), HasSubstr(absl::StrCat(start - 1000)));
  auto ahead = index_.Subscribe([](const WorkloadEvent&) {}, index_.revision() + 1);
  EXPECT_EQ(ahead.status().code(), absl::StatusCode::kOutOfRange);

  // The resumed subscriber then gets what follows, in order.
  Touch(6);
  Touch(7);
  std::vector<WorkloadEvent> later = resumed.Take();
  ASSERT_THAT(later, SizeIs(2));
  EXPECT_EQ(later[0].revision, events[4].revision + 1);
  EXPECT_EQ(later[1].revision, events[4].revision + 2);
  EXPECT_THAT(recorder_.Take(), SizeIs(2));

  // A fresh subscription gets the views at its revision.
  auto fresh = index_.Subscribe([](const WorkloadEvent&) {}, 0);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->revision, index_.revision());
  EXPECT_THAT(fresh->views, SizeIs(1));
  EXPECT_THAT(fresh->backlog, IsEmpty());

  // Unsubscribed listeners get nothing more.
  index_.Unsubscribe(resume->id);
  index_.Unsubscribe(fresh->id);
  Touch(8);
  EXPECT_THAT(resumed.Take(), IsEmpty());
  EXPECT_THAT(recorder_.Take(), SizeIs(1));
}

TEST_F(WorkloadIndexHistoryTest, ResumeReportsDeletionsWhileRemembered) {
  FeedSeed();
  // JobSets like the demo under other names; none has children.
  auto jobset = [&](const std::string& name) {
    Json copy = Find(seed_, "JobSet", "demo");
    copy["metadata"]["name"] = name;
    copy["metadata"]["uid"] = "uid-" + name;
    return copy;
  };
  auto put = [&](const std::string& name) {
    cluster_.Put(index_, jobset(name));
    index_.WaitForIdle();
    return index_.revision();
  };
  auto remove = [&](const std::string& name) {
    cluster_.Delete(index_, jobset(name));
    index_.WaitForIdle();
    return index_.revision();
  };
  auto summary = [](const std::vector<WorkloadEvent>& backlog) {
    std::vector<std::string> out;
    for (const WorkloadEvent& e : backlog) {
      out.push_back(absl::StrCat(v1::WorkloadEvent::Type_Name(e.type), " ", e.view->name));
    }
    return out;
  };
  const uint64_t start = index_.revision();
  const uint64_t a_added = put("a");
  put("b");
  const uint64_t a_deleted = remove("a");
  // After a was added: b added, then a deleted, in revision order.
  auto after_a = index_.Subscribe([](const WorkloadEvent&) {}, a_added);
  ASSERT_TRUE(after_a.ok()) << after_a.status();
  EXPECT_THAT(summary(after_a->backlog), ElementsAre("ADDED b", "DELETED a"));
  index_.Unsubscribe(after_a->id);
  // Before a was added: a came and went, so only b.
  auto before_a = index_.Subscribe([](const WorkloadEvent&) {}, start);
  ASSERT_TRUE(before_a.ok()) << before_a.status();
  EXPECT_THAT(summary(before_a->backlog), ElementsAre("ADDED b"));
  index_.Unsubscribe(before_a->id);

  // Three deletions are remembered: a fourth forgets a's, and resuming from
  // before it is refused.
  put("c");
  put("d");
  const uint64_t all_added = put("e");
  remove("b");
  remove("c");
  remove("d");
  EXPECT_EQ(index_.Subscribe([](const WorkloadEvent&) {}, a_added).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(index_.Subscribe([](const WorkloadEvent&) {}, a_deleted - 1).status().code(),
            absl::StatusCode::kOutOfRange);
  // From a's deletion on: b deleted; c and d came and went; e added.
  auto from_forgotten = index_.Subscribe([](const WorkloadEvent&) {}, a_deleted);
  ASSERT_TRUE(from_forgotten.ok()) << from_forgotten.status();
  EXPECT_THAT(summary(from_forgotten->backlog), ElementsAre("ADDED e", "DELETED b"));
  index_.Unsubscribe(from_forgotten->id);
  auto after_forgotten = index_.Subscribe([](const WorkloadEvent&) {}, all_added);
  ASSERT_TRUE(after_forgotten.ok()) << after_forgotten.status();
  EXPECT_THAT(summary(after_forgotten->backlog),
              ElementsAre("DELETED b", "DELETED c", "DELETED d"));
  index_.Unsubscribe(after_forgotten->id);

  // A pod of the demo deleted: watches never carry objects inside a
  // workload, so its deletion is not remembered and forgets nothing.
  const uint64_t before_pod = index_.revision();
  cluster_.Delete(index_, Find(seed_, "Pod", kPods[0]));
  index_.WaitForIdle();
  auto after_pod = index_.Subscribe([](const WorkloadEvent&) {}, before_pod);
  ASSERT_TRUE(after_pod.ok()) << after_pod.status();
  EXPECT_THAT(summary(after_pod->backlog), ::testing::Contains("MODIFIED demo"));
  EXPECT_THAT(summary(after_pod->backlog),
              ::testing::Each(::testing::Not(::testing::StartsWith("DELETED"))));
  index_.Unsubscribe(after_pod->id);
  auto still = index_.Subscribe([](const WorkloadEvent&) {}, a_deleted);
  ASSERT_TRUE(still.ok()) << still.status();
  index_.Unsubscribe(still->id);
}

// A failing component expression makes a partial answer (resolution's
// partial_answer_test); a failing status fails the resolution.
TEST(WorkloadIndexErrorTest, FailingStatusGivesAViewWithTheError) {
  FakeCluster cluster(MakeRegistry(true, kBrokenWidget));
  WorkloadIndex index(Engine(), {});
  index.AddCluster(&cluster);
  index.Start();
  cluster.Put(index, resolution::testing::Yaml(R"(
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default, uid: w-1, creationTimestamp: '2026-01-01T00:00:00Z',
           labels: {app: w}}
spec: {replicas: 2, pod: {containers: [{name: c, image: i}]}}
)"));
  index.WaitForIdle();
  auto view = index.Get(Key(kWidget, "w"));
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->resolved, nullptr);
  EXPECT_FALSE(view->error.ok());
  EXPECT_THAT(view->error.message(), HasSubstr("widget status is broken"));
  EXPECT_EQ(view->uid, "w-1");
  EXPECT_EQ(view->labels.at("app"), "w");
  EXPECT_THAT(view->summary.error(), HasSubstr("widget status is broken"));
  EXPECT_EQ(view->summary.ref().kind(), "Widget");
  EXPECT_EQ(view->summary.ref().name(), "w");
  EXPECT_EQ(view->summary.ref().namespace_(), "default");
  EXPECT_EQ(view->summary.ref().cluster(), "test");
  EXPECT_EQ(view->summary.ref().uid(), "w-1");
  EXPECT_EQ(view->summary.creation_timestamp(), "2026-01-01T00:00:00Z");
  EXPECT_THAT(view->summary.components(), IsEmpty());
  EXPECT_EQ(index.counters().resolution_errors, 1u);
}

TEST_F(WorkloadIndexTest, SummarizeRowsPerComponentInstance) {
  FeedSeed();
  auto demo = index_.Get(kDemo);
  ASSERT_NE(demo, nullptr);
  v1::WorkloadSummary summary = Summarize(*demo);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(summary, demo->summary));
  EXPECT_EQ(summary.ref().cluster(), "test");
  EXPECT_EQ(summary.ref().kind(), "JobSet");
  EXPECT_EQ(summary.ref().name(), "demo");
  EXPECT_EQ(summary.definition(), "jobset-x-k8s-io-jobset-v1alpha2");
  EXPECT_EQ(summary.creation_timestamp(), "2026-11-30T12:00:00Z");
  EXPECT_TRUE(summary.error().empty());
  ASSERT_THAT(summary.components(), SizeIs(2));
  EXPECT_EQ(summary.components(0).name(), "replicatedjob");
  EXPECT_EQ(summary.components(0).instance_id(), "leader");
  EXPECT_EQ(summary.components(0).gpus(), 4);
  EXPECT_EQ(summary.components(1).name(), "replicatedjob");
  EXPECT_EQ(summary.components(1).instance_id(), "worker");
  EXPECT_EQ(summary.components(1).gpus(), 8);
  EXPECT_EQ(summary.gpus(), 12);

  // A Job: one row for its single instance, its pod's GPUs.
  auto resolved_job = index_.ResolveNow(Key(kJob, "demo-worker-1"));
  ASSERT_TRUE(resolved_job.ok()) << resolved_job.status();
  const auto& job = *resolved_job;
  ASSERT_THAT(job->summary.components(), SizeIs(1));
  EXPECT_EQ(job->summary.components(0).instance_id(), "");
  EXPECT_EQ(job->summary.components(0).gpus(), 4);
  EXPECT_EQ(job->summary.components(0).replicas().ready(), 1);
  EXPECT_EQ(job->summary.gpus(), 4);
}

// 4 threads change 50 JobSets (each with a Job and a pod) while 2 threads
// read and a subscriber follows.
TEST(WorkloadIndexConcurrencyTest, ConcurrentChangesReadsAndSubscriber) {
  constexpr int kJobSets = 50, kWriters = 4, kSteps = 3;
  FakeCluster cluster(Catalog());
  WorkloadIndex index(Engine(), {});
  index.AddCluster(&cluster);
  index.Start();

  std::mutex seen_mu;
  std::map<WorkloadKey, uint64_t> seen;  // last revision per key
  uint64_t seen_events = 0, last_revision = 0;
  bool in_order = true;
  auto sub = index.Subscribe(
      [&](const WorkloadEvent& event) {
        std::lock_guard lock(seen_mu);
        ++seen_events;
        in_order = in_order && event.revision > last_revision;
        last_revision = event.revision;
        if (event.type == v1::WorkloadEvent::DELETED) {
          seen.erase(event.view->id);
        } else {
          seen[event.view->id] = event.revision;
        }
      },
      0);
  ASSERT_TRUE(sub.ok());
  const uint64_t start = sub->revision;

  auto jobset = [](int i, int step) {
    Json o = resolution::testing::Yaml(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {namespace: default}
spec:
  replicatedJobs:
  - name: worker
    replicas: 1
    template:
      spec:
        template:
          spec:
            containers:
            - name: worker
              resources: {limits: {nvidia.com/gpu: '2'}}
status:
  replicatedJobsStatus: [{name: worker, active: 1, ready: 1}]
)");
    o["metadata"]["name"] = absl::StrCat("js-", i);
    o["metadata"]["uid"] = absl::StrCat("js-uid-", i);
    o["metadata"]["labels"]["step"] = absl::StrCat(step);
    return o;
  };
  auto job = [](int i) {
    Json o = resolution::testing::Yaml(R"(
apiVersion: batch/v1
kind: Job
metadata:
  namespace: default
  labels: {jobset.sigs.k8s.io/replicatedjob-name: worker, jobset.sigs.k8s.io/job-index: '0'}
spec:
  template:
    spec:
      containers:
      - name: worker
        resources: {limits: {nvidia.com/gpu: '2'}}
status: {active: 1, ready: 1}
)");
    o["metadata"]["name"] = absl::StrCat("js-", i, "-worker-0");
    o["metadata"]["uid"] = absl::StrCat("job-uid-", i);
    o["metadata"]["ownerReferences"] = {{{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                                         {"kind", "JobSet"},
                                         {"name", absl::StrCat("js-", i)},
                                         {"uid", absl::StrCat("js-uid-", i)},
                                         {"controller", true}}};
    return o;
  };
  auto pod = [](int i, bool ready) {
    Json o = resolution::testing::Yaml(R"(
apiVersion: v1
kind: Pod
metadata:
  namespace: default
  labels: {jobset.sigs.k8s.io/replicatedjob-name: worker, jobset.sigs.k8s.io/job-index: '0'}
spec:
  nodeName: node-1
  containers:
  - name: worker
    resources: {limits: {nvidia.com/gpu: '2'}}
status:
  phase: Running
  conditions: [{type: Ready, status: 'True'}]
)");
    o["metadata"]["name"] = absl::StrCat("js-", i, "-worker-0-0");
    o["metadata"]["uid"] = absl::StrCat("pod-uid-", i);
    o["metadata"]["ownerReferences"] = {{{"apiVersion", "batch/v1"},
                                         {"kind", "Job"},
                                         {"name", absl::StrCat("js-", i, "-worker-0")},
                                         {"uid", absl::StrCat("job-uid-", i)},
                                         {"controller", true}}};
    o["status"]["conditions"][0]["status"] = ready ? "True" : "False";
    return o;
  };

  std::atomic<bool> done = false;
  std::atomic<int> reads = 0;
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      int i = r;
      while (!done) {
        for (const auto& view : index.List()) {
          // Views are immutable and complete once published.
          EXPECT_GT(view->revision, start);
          EXPECT_EQ(view->summary.ref().name(), view->name);
        }
        auto view = index.Get(Key(kJobSet, absl::StrCat("js-", i++ % kJobSets)));
        if (view) {
          EXPECT_TRUE(view->error.ok()) << view->error;
          EXPECT_NE(view->resolved, nullptr);
        }
        ++reads;
      }
    });
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937 random(w);
      for (int i = w; i < kJobSets; i += kWriters) {
        // Each JobSet's objects in a random order, then changes.
        std::vector<Json> objects = {jobset(i, 0), job(i), pod(i, true)};
        std::shuffle(objects.begin(), objects.end(), random);
        for (const Json& o : objects) cluster.Put(index, o);
        for (int step = 1; step <= kSteps; ++step) {
          cluster.Put(index, jobset(i, step));
          cluster.Put(index, pod(i, step % 2 == 0));
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  index.WaitForIdle();
  // Let the readers see the final state too.
  const int reads_before = reads;
  while (reads < reads_before + 2) std::this_thread::yield();
  done = true;
  for (auto& t : readers) t.join();

  EXPECT_TRUE(index.Idle());
  auto views = index.List();
  EXPECT_THAT(views, SizeIs(kJobSets));  // their Jobs and pods have no views
  for (int i = 0; i < kJobSets; ++i) {
    auto view = index.Get(Key(kJobSet, absl::StrCat("js-", i)));
    ASSERT_NE(view, nullptr) << i;
    ASSERT_NE(view->resolved, nullptr) << view->error;
    EXPECT_EQ(view->labels.at("step"), absl::StrCat(kSteps));
    // The last pod change: ready when kSteps is even.
    ASSERT_THAT(view->summary.components(), SizeIs(1));
    EXPECT_EQ(view->summary.components(0).replicas().ready(), kSteps % 2 == 0 ? 1 : 0);
    EXPECT_EQ(view->summary.components(0).replicas().current(), 1);
    EXPECT_EQ(view->summary.gpus(), 2);
    // Whatever order they came in, the Job and the pod ended up inside.
    EXPECT_EQ(index.Get(Key(kJob, absl::StrCat("js-", i, "-worker-0"))), nullptr);
    EXPECT_EQ(index.Get(Key(kPod, absl::StrCat("js-", i, "-worker-0-0"))), nullptr);
  }
  // The listener runs under the index's lock: read the index first, and
  // never call it while holding seen_mu.
  const uint64_t end = index.revision();
  index.Unsubscribe(sub->id);
  std::lock_guard lock(seen_mu);
  EXPECT_TRUE(in_order);
  EXPECT_EQ(seen_events, end - start);
  EXPECT_EQ(seen.size(), views.size());
  for (const auto& view : views) {
    auto it = seen.find(view->id);
    ASSERT_NE(it, seen.end()) << view->id.key;
    EXPECT_EQ(it->second, view->revision) << view->id.key;
  }
}

}  // namespace
}  // namespace wm::index
