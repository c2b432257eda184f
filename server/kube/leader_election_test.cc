// LeaderElector's shared state under concurrency (for TSan): candidates
// campaigning against an in-memory Lease behind a scripted server while
// other threads ask who leads. The election's rules are tested against the
// real apiserver in integration_tests/kube/leader_election_test.cc.
#include "server/kube/leader_election.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/kube/testing/scripted_server.h"

namespace wm::kube {
namespace {

using testing::ScriptedServer;

// One Lease, with the apiserver's optimistic concurrency: a PUT must carry
// the resourceVersion it read.
class LeaseStore {
 public:
  void Serve(const ScriptedServer::Request& request, ScriptedServer::Responder& out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto answer = [&out](int status, const std::string& body) {
      out.Head(status, {{"Content-Type", "application/json"},
                        {"Content-Length", std::to_string(body.size())}});
      out.Write(body);
    };
    if (request.method == "GET") {
      if (lease_.is_null()) return answer(404, R"({"kind":"Status","code":404})");
      return answer(200, lease_.dump());
    }
    Json body = Json::parse(request.body, nullptr, false);
    if (request.method == "POST") {
      if (!lease_.is_null()) return answer(409, R"({"kind":"Status","code":409})");
      lease_ = body;
      lease_["metadata"]["resourceVersion"] = std::to_string(++version_);
      return answer(201, lease_.dump());
    }
    if (request.method == "PUT") {
      if (lease_.is_null() ||
          body["metadata"].value("resourceVersion", "") != std::to_string(version_)) {
        return answer(409, R"({"kind":"Status","code":409})");
      }
      lease_ = body;
      lease_["metadata"]["resourceVersion"] = std::to_string(++version_);
      ++updates_;
      return answer(200, lease_.dump());
    }
    answer(405, "{}");
  }
  int updates() {
    std::lock_guard<std::mutex> lock(mu_);
    return updates_;
  }

 private:
  std::mutex mu_;
  Json lease_;
  int version_ = 0;
  int updates_ = 0;
};

TEST(LeaderElectorStressTest, CandidatesCampaignWhileOthersAskWhoLeads) {
  LeaseStore store;
  ScriptedServer server([&store](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    store.Serve(r, out);
  });
  ClusterConnection connection;
  connection.server = server.url();
  ApiClient client(connection);
  std::atomic<int> started{0}, stopped{0};
  std::vector<std::unique_ptr<LeaderElector>> candidates;
  for (int i = 0; i < 3; ++i) {
    auto elector = LeaderElector::Create(client, {.namespace_ = "ns",
                                                  .name = "lease",
                                                  .identity = absl::StrCat("candidate-", i),
                                                  .lease_duration = absl::Milliseconds(600),
                                                  .renew_deadline = absl::Milliseconds(400),
                                                  .retry_period = absl::Milliseconds(50),
                                                  .on_started_leading = [&started] { ++started; },
                                                  .on_stopped_leading = [&stopped] { ++stopped; }});
    ASSERT_TRUE(elector.ok()) << elector.status();
    candidates.push_back(*std::move(elector));
  }
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done) {
        for (auto& c : candidates) {
          (void)c->IsLeader();
          (void)c->leader();
        }
      }
    });
  }
  for (auto& c : candidates) c->Start();
  absl::SleepFor(absl::Seconds(1));
  // The leader hands over by releasing; then one dies without a word.
  for (int round = 0; round < 2; ++round) {
    for (auto& c : candidates) {
      if (c->IsLeader()) {
        c->Stop(/*release=*/round == 0);
        break;
      }
    }
    absl::SleepFor(absl::Seconds(1));
  }
  // The last candidate leads once the dead one's lease has run out.
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  int leaders = 0;
  while (leaders == 0 && absl::Now() < deadline) {
    leaders = 0;
    for (auto& c : candidates) leaders += c->IsLeader();
    absl::SleepFor(absl::Milliseconds(10));
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(leaders, 1) << "the last candidate should lead";
  for (auto& c : candidates) c->Stop();
  EXPECT_GE(started.load(), 3);
  EXPECT_EQ(started.load(), stopped.load());
  EXPECT_GT(store.updates(), 10);
}

}  // namespace
}  // namespace wm::kube
