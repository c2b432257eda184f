// The reflector's list/watch rules against a scripted HTTP server: framing,
// pagination, relists, backoff and dead connections at the byte level. The
// same informer runs against the real kube-apiserver in
// integration_tests/kube/.
#include "server/kube/reflector.h"

#include <future>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/kube/informer.h"
#include "server/kube/testing/eventually.h"
#include "server/kube/testing/scripted_server.h"

namespace wm::kube {
namespace {

using testing::Eventually;
using testing::ScriptedServer;

std::string PodJson(const std::string& name, const std::string& rv, const std::string& uid = "") {
  return Json{{"kind", "Pod"},
              {"apiVersion", "v1"},
              {"metadata",
               {{"name", name},
                {"namespace", "ns"},
                {"uid", uid.empty() ? "uid-" + name : uid},
                {"resourceVersion", rv}}}}
      .dump();
}

std::string ListJson(const std::vector<std::string>& pods, const std::string& rv,
                     const std::string& continue_token = "") {
  std::string items;
  for (const std::string& pod : pods) absl::StrAppend(&items, items.empty() ? "" : ",", pod);
  return absl::StrCat(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")", rv,
                      R"(","continue":")", continue_token, R"("},"items":[)", items, "]}");
}

std::string Event(const std::string& type, const std::string& object) {
  return absl::StrCat(R"({"type":")", type, R"(","object":)", object, "}\n");
}

std::string Bookmark(const std::string& rv, bool initial_end = false) {
  std::string annotations =
      initial_end ? R"(,"annotations":{"k8s.io/initial-events-end":"true"})" : "";
  return Event("BOOKMARK",
               absl::StrCat(R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")",
                            rv, "\"", annotations, "}}"));
}

bool IsWatch(const ScriptedServer::Request& r) { return r.Query("watch") == "1"; }

ApiResource Pods() { return ApiResource{"", "v1", "Pod", "pods", true, {"list", "watch"}}; }

ReflectorOptions FastOptions(bool watch_list = false) {
  ReflectorOptions options;
  options.use_watch_list = watch_list;
  options.page_size = 2;
  options.min_watch_timeout = absl::Seconds(5);
  options.max_watch_timeout = absl::Seconds(5);
  options.idle_timeout = absl::Seconds(2);
  options.backoff.initial = absl::Milliseconds(20);
  options.backoff.cap = absl::Milliseconds(100);
  options.very_short_watch = absl::Milliseconds(200);
  return options;
}

ClusterConnection Connection(const ScriptedServer& server) {
  ClusterConnection connection;
  connection.server = server.url();
  return connection;
}

// Keeps the watch open (without bytes) until the client hangs up or the test ends.
void HoldOpen(ScriptedServer::Responder& out, absl::Duration for_at_most = absl::Seconds(3)) {
  absl::Time end = absl::Now() + for_at_most;
  while (absl::Now() < end) {
    out.Sleep(absl::Milliseconds(50));
  }
}

// How long a test waits for the cache to catch up before it fails.
constexpr absl::Duration kWait = absl::Seconds(10);

std::vector<std::string> Keys(const Store& store) {
  std::vector<std::string> keys;
  for (const auto& object : store.List()) keys.push_back(object->key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(ReflectorTest, ListsAllPagesThenWatchesFromTheListVersion) {
  std::atomic<int> watches{0};
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200, {{"Content-Type", "application/json"}});
    if (!IsWatch(r)) {
      if (r.Query("continue").empty()) {
        out.Write(ListJson({PodJson("a", "3"), PodJson("b", "9")}, "10", "page2"));
      } else {
        out.Write(ListJson({PodJson("c", "4")}, "10"));
      }
      return;
    }
    if (watches++ == 0) {
      // Events split at odd places, several per write.
      std::string stream =
          Event("ADDED", PodJson("d", "12")) + Event("MODIFIED", PodJson("a", "13"));
      for (size_t i = 0; i < stream.size(); i += 7) out.Write(stream.substr(i, 7));
      return;  // a normal end of the watch
    }
    HoldOpen(out);
  });
  ApiClient client(Connection(server));
  Informer live(client, Pods(), FastOptions());
  std::vector<std::string> seen;
  std::mutex mu;
  live.AddHandler([&](const Change& c) {
    std::unique_lock lock(mu);
    seen.push_back(absl::StrCat(EventTypeName(c.type), " ", c.new_object->key()));
  });
  live.Start();
  ASSERT_TRUE(server.WaitForRequests(4, absl::Seconds(10)));
  ASSERT_TRUE(Eventually([&] { return live.store().size() == 4; }, kWait));
  live.WaitForIdle();
  std::vector<ScriptedServer::Request> requests = server.requests();
  EXPECT_EQ(requests[0].Query("limit"), "2");
  EXPECT_EQ(requests[1].Query("continue"), "page2");
  EXPECT_EQ(requests[2].Query("resourceVersion"), "10");  // the list's, not an item's
  EXPECT_EQ(requests[2].Query("allowWatchBookmarks"), "true");
  EXPECT_EQ(requests[3].Query("resourceVersion"), "13");  // re-watch, no relist
  EXPECT_TRUE(IsWatch(requests[3]));
  EXPECT_THAT(Keys(live.store()), ::testing::ElementsAre("ns/a", "ns/b", "ns/c", "ns/d"));
  EXPECT_EQ(live.store().Get("ns/a")->resource_version(), "13");
  std::unique_lock lock(mu);
  EXPECT_THAT(seen, ::testing::ElementsAre("ADDED ns/a", "ADDED ns/b", "ADDED ns/c", "ADDED ns/d",
                                           "MODIFIED ns/a"));
  EXPECT_EQ(live.Health().lists, 1);
}

TEST(ReflectorTest, ExpiredContinueTokenRestartsTheList) {
  std::atomic<int> second_pages{0};
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    if (IsWatch(r)) {
      out.Head(200);
      HoldOpen(out);
      return;
    }
    if (!r.Query("continue").empty() && second_pages++ == 0) {
      out.Head(410, {{"Content-Type", "application/json"}});
      out.Write(
          R"({"kind":"Status","code":410,"reason":"Expired","message":"continue parameter is too old"})");
      return;
    }
    out.Head(200);
    out.Write(r.Query("continue").empty()
                  ? ListJson({PodJson("a", "1"), PodJson("b", "2")}, "20", "next")
                  : ListJson({PodJson("c", "3")}, "20"));
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions());
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  EXPECT_THAT(Keys(informer.store()), ::testing::ElementsAre("ns/a", "ns/b", "ns/c"));
  std::vector<ScriptedServer::Request> requests = server.requests();
  ASSERT_GE(requests.size(), 4u);
  EXPECT_EQ(requests[2].Query("continue"), "");  // restarted from the first page
  EXPECT_EQ(requests[3].Query("continue"), "next");
}

TEST(ReflectorTest, ExpiredWatchRelistsAndDeletesWhatIsGone) {
  std::atomic<int> lists{0};
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200);
    if (!IsWatch(r)) {
      out.Write(lists++ == 0 ? ListJson({PodJson("a", "1"), PodJson("b", "2")}, "5")
                             : ListJson({PodJson("b", "2"), PodJson("c", "8")}, "9"));
      return;
    }
    if (r.Query("resourceVersion") == "5") {
      out.Write(Event(
          "ERROR",
          R"({"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 5 vs 7"})"));
      return;
    }
    HoldOpen(out);
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions());
  std::vector<std::string> deleted;
  std::mutex mu;
  informer.AddHandler([&](const Change& c) {
    std::unique_lock lock(mu);
    if (c.type == EventType::kDeleted) deleted.push_back(c.old_object->key());
  });
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.Health().lists == 2; }, kWait));
  informer.WaitForIdle();
  EXPECT_THAT(Keys(informer.store()), ::testing::ElementsAre("ns/b", "ns/c"));
  EXPECT_EQ(informer.Health().relists_410, 1);
  std::unique_lock lock(mu);
  EXPECT_THAT(deleted, ::testing::ElementsAre("ns/a"));
}

TEST(ReflectorTest, InvalidJsonIsCountedAndAnsweredWithARelist) {
  std::atomic<int> lists{0};
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200);
    if (!IsWatch(r)) {
      out.Write(ListJson({PodJson("a", std::to_string(++lists))}, "5"));
      return;
    }
    if (lists == 1) {
      out.Write(Event("ADDED", PodJson("b", "6")));
      out.Write("{\"type\":\"ADDED\",\"object\":{not json}\n");
      out.Write(Event("ADDED", PodJson("never", "7")));
      return;
    }
    HoldOpen(out);
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions());
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.Health().lists == 2; }, kWait));
  EXPECT_EQ(informer.Health().decode_errors, 1);
  EXPECT_EQ(informer.store().Get("ns/never"), nullptr);
  EXPECT_THAT(Keys(informer.store()), ::testing::ElementsAre("ns/a"));
}

TEST(ReflectorTest, ForbiddenIsReportedAndRetriedUntilAllowed) {
  std::atomic<int> calls{0};
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    if (IsWatch(r)) {
      out.Head(200);
      HoldOpen(out);
      return;
    }
    if (calls++ < 3) {
      out.Head(403);
      out.Write(
          R"({"kind":"Status","code":403,"reason":"Forbidden","message":"pods is forbidden: User \"x\" cannot list resource \"pods\""})");
      return;
    }
    out.Head(200);
    out.Write(ListJson({PodJson("a", "1")}, "2"));
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions());
  informer.Start();
  ASSERT_TRUE(Eventually(
      [&] { return informer.Health().state == ReflectorHealth::State::kForbidden; }, kWait));
  EXPECT_THAT(informer.Health().message, ::testing::HasSubstr("cannot list resource"));
  EXPECT_FALSE(informer.HasSynced());
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  EXPECT_EQ(informer.Health().state, ReflectorHealth::State::kSynced);
  EXPECT_GE(calls.load(), 4);
}

TEST(ReflectorTest, NotFoundTakesTheObjectsAway) {
  std::atomic<int> lists{0};
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    if (!IsWatch(r) && lists++ == 0) {
      out.Head(200);
      out.Write(ListJson({PodJson("a", "1")}, "2"));
      return;
    }
    out.Head(404);
    out.Write(
        R"({"kind":"Status","code":404,"reason":"NotFound","message":"the server could not find the requested resource"})");
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions());
  informer.Start();
  ASSERT_TRUE(Eventually(
      [&] { return informer.Health().state == ReflectorHealth::State::kNotFound; }, kWait));
  EXPECT_EQ(informer.store().size(), 0u);
}

TEST(ReflectorTest, WatchListSyncsOnTheInitialEventsEndBookmark) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200);
    ASSERT_EQ(r.Query("sendInitialEvents"), "true");
    EXPECT_EQ(r.Query("resourceVersionMatch"), "NotOlderThan");
    out.Write(Event("ADDED", PodJson("a", "3")) + Event("ADDED", PodJson("b", "4")));
    released.wait_for(std::chrono::seconds(10));
    out.Write(Bookmark("20", /*initial_end=*/true));
    out.Write(Event("ADDED", PodJson("c", "21")));
    HoldOpen(out);
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions(/*watch_list=*/true));
  informer.Start();
  ASSERT_TRUE(server.WaitForRequests(1, absl::Seconds(5)));
  absl::SleepFor(absl::Milliseconds(200));
  // Until the bookmark, the initial state is incomplete: nothing is applied.
  EXPECT_FALSE(informer.HasSynced());
  EXPECT_EQ(informer.store().size(), 0u);
  release.set_value();
  ASSERT_TRUE(Eventually([&] { return informer.store().size() == 3; }, kWait));
  EXPECT_TRUE(informer.HasSynced());
  EXPECT_EQ(server.requests().size(), 1u);  // no list was needed
}

TEST(ReflectorTest, WatchListRefusedFallsBackToPaginatedLists) {
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    if (r.Query("sendInitialEvents") == "true") {
      out.Head(400);
      out.Write(
          R"({"kind":"Status","code":400,"reason":"BadRequest","message":"sendInitialEvents is forbidden"})");
      return;
    }
    out.Head(200);
    if (!IsWatch(r)) {
      out.Write(ListJson({PodJson("a", "1")}, "2"));
      return;
    }
    HoldOpen(out);
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions(/*watch_list=*/true));
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  EXPECT_EQ(informer.store().size(), 1u);
  std::vector<ScriptedServer::Request> requests = server.requests();
  EXPECT_EQ(requests[1].Query("limit"), "2");
}

TEST(ReflectorTest, SilentDeadConnectionIsDetectedAndReopened) {
  std::atomic<int> watches{0};
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200);
    if (!IsWatch(r)) {
      out.Write(ListJson({PodJson("a", "1")}, "2"));
      return;
    }
    if (watches++ == 0) {
      out.Write(Event("ADDED", PodJson("b", "3")));
      HoldOpen(out, absl::Seconds(4));  // no byte, no FIN: beyond the 2 s idle timeout
      return;
    }
    HoldOpen(out);
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions());
  absl::Time start = absl::Now();
  informer.Start();
  ASSERT_TRUE(server.WaitForRequests(3, absl::Seconds(8)));
  absl::Duration detected = absl::Now() - start;
  EXPECT_LT(detected, absl::Seconds(4));
  std::vector<ScriptedServer::Request> requests = server.requests();
  EXPECT_EQ(requests[2].Query("resourceVersion"), "3");  // resumes, no relist
  EXPECT_EQ(informer.Health().lists, 1);
}

TEST(ReflectorTest, VeryShortWatchesBackOffExponentially) {
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200);
    if (!IsWatch(r)) out.Write(ListJson({}, "2"));
    // Watches end at once with no event.
  });
  ApiClient client(Connection(server));
  ReflectorOptions options = FastOptions();
  options.backoff.initial = absl::Milliseconds(100);
  options.backoff.cap = absl::Seconds(10);
  options.backoff.jitter = 0;
  Informer informer(client, Pods(), options);
  informer.Start();
  absl::SleepFor(absl::Milliseconds(1600));
  informer.Stop();
  // Waits of 100, 200, 400, 800 ms: about 5 watches in 1.6 s, not hundreds.
  size_t watches = 0;
  for (const auto& r : server.requests()) watches += IsWatch(r);
  EXPECT_GE(watches, 3u);
  EXPECT_LE(watches, 6u);
  EXPECT_THAT(informer.Health().message, ::testing::HasSubstr("very short watch"));
}

TEST(ReflectorTest, SixteenMebibyteEventThroughTheSocket) {
  std::string big_value(16 << 20, 'z');
  // Built before the server starts: composing 16 MiB inside the handler takes
  // seconds under TSan, silence the client would rightly read as a dead
  // connection.
  Json pod = Json::parse(PodJson("big", "3"));
  pod["metadata"]["annotations"] = {{"blob", big_value}};
  const std::string big_event = Event("ADDED", pod.dump());
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200);
    if (!IsWatch(r)) {
      out.Write(ListJson({}, "2"));
      return;
    }
    if (r.Query("resourceVersion") == "2") out.Write(big_event);
    HoldOpen(out);
  });
  ApiClient client(Connection(server));
  ReflectorOptions options = FastOptions();
  options.shape = ObjectShape::kCompactPod;
  Informer informer(client, Pods(), options);
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.store().size() == 1; }, kWait));
  auto document = informer.store().Get("ns/big")->Document();
  EXPECT_EQ((*document)["metadata"]["annotations"]["blob"].get<std::string>().size(),
            big_value.size());
}

TEST(ReflectorTest, RetryAfterIsHonoured) {
  std::atomic<int> lists{0};
  ScriptedServer server([&](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    if (!IsWatch(r) && lists++ == 0) {
      out.Head(429, {{"Retry-After", "1"}});
      out.Write(
          R"({"kind":"Status","code":429,"reason":"TooManyRequests","message":"storage is (re)initializing"})");
      return;
    }
    out.Head(200);
    if (!IsWatch(r)) {
      out.Write(ListJson({}, "2"));
      return;
    }
    HoldOpen(out);
  });
  ApiClient client(Connection(server));
  Informer informer(client, Pods(), FastOptions());
  absl::Time start = absl::Now();
  informer.Start();
  ASSERT_TRUE(Eventually([&] { return informer.HasSynced(); }, kWait));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(950));
}

}  // namespace
}  // namespace wm::kube
