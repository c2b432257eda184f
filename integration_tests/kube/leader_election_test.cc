// LeaderElector against the testbed's real apiserver: one leader at a time,
// hand-over when the leader dies (within the lease duration) or releases
// (at once), and a leader cut off from the apiserver stops leading before
// another may take the Lease.
#include "server/kube/leader_election.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration_tests/kube/tcp_proxy.h"
#include "integration_tests/kube/testbed_fixture.h"

namespace wm::testing {
namespace {

// Short durations, so that a hand-over takes seconds; the rules are the
// same as at the defaults (15 s, 10 s, 2 s).
constexpr absl::Duration kLease = absl::Seconds(3);
constexpr absl::Duration kRenew = absl::Seconds(2);
constexpr absl::Duration kRetry = absl::Milliseconds(400);

std::unique_ptr<kube::LeaderElector> Candidate(const kube::ApiClient& client, const std::string& ns,
                                               const std::string& identity) {
  auto elector = kube::LeaderElector::Create(client, {.namespace_ = ns,
                                                      .name = "workloadmapd",
                                                      .identity = identity,
                                                      .lease_duration = kLease,
                                                      .renew_deadline = kRenew,
                                                      .retry_period = kRetry});
  EXPECT_TRUE(elector.ok()) << elector.status();
  return *std::move(elector);
}

// Samples who leads every 5 ms until stopped, and counts the samples at
// which two candidates said they led at once.
class Overlaps {
 public:
  Overlaps(std::vector<kube::LeaderElector*> candidates)
      : candidates_(std::move(candidates)), thread_([this] { Watch(); }) {}
  ~Overlaps() {
    stop_ = true;
    thread_.join();
  }
  int count() const { return overlaps_.load(); }

 private:
  void Watch() {
    while (!stop_) {
      int leaders = 0;
      for (kube::LeaderElector* c : candidates_) leaders += c->IsLeader();
      if (leaders > 1) ++overlaps_;
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
  std::vector<kube::LeaderElector*> candidates_;
  std::atomic<bool> stop_{false};
  std::atomic<int> overlaps_{0};
  std::thread thread_;
};

// The one leader among `candidates` within `timeout`, or null.
kube::LeaderElector* AwaitLeader(const std::vector<kube::LeaderElector*>& candidates,
                                 absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    for (kube::LeaderElector* c : candidates) {
      if (c->IsLeader()) return c;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return nullptr;
}

std::string Holder(const std::string& ns) {
  auto lease = Testbed::Get().Call(
      "GET", absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/", ns, "/leases/workloadmapd"));
  if (!lease.ok()) return "<" + std::string(lease.status().message()) + ">";
  return (*lease)["spec"].value("holderIdentity", "");
}

TEST(LeaderElectionTest, OneLeadsADeadLeaderIsReplacedWithinTheLeaseAndAReleaseHandsOverAtOnce) {
  const std::string ns = Testbed::Get().NewNamespace("lease");
  const kube::ApiClient& client = Testbed::Get().admin();
  auto a = Candidate(client, ns, "a");
  auto b = Candidate(client, ns, "b");
  Overlaps overlaps({a.get(), b.get()});
  a->Start();
  b->Start();
  kube::LeaderElector* first = AwaitLeader({a.get(), b.get()}, absl::Seconds(10));
  ASSERT_NE(first, nullptr) << "nobody leads";
  kube::LeaderElector* second = first == a.get() ? b.get() : a.get();
  EXPECT_EQ(Holder(ns), first->identity());
  absl::SleepFor(kLease);  // renewals keep it
  EXPECT_TRUE(first->IsLeader());
  EXPECT_FALSE(second->IsLeader());
  EXPECT_EQ(second->leader(), first->identity());

  // The leader dies without a word (kill -9): the other takes over once
  // the record has not changed for the lease duration.
  absl::Time died = absl::Now();
  first->Stop(/*release=*/false);
  ASSERT_EQ(AwaitLeader({second}, kLease + 4 * kRetry + absl::Seconds(2)), second)
      << "no hand-over";
  absl::Duration handover = absl::Now() - died;
  EXPECT_GE(handover, kLease - kRetry) << "taken before the lease ran out";
  EXPECT_LE(handover, kLease + 3 * kRetry + absl::Seconds(1));
  EXPECT_EQ(Holder(ns), second->identity());

  // A leader that stops gives the Lease up: a new candidate takes it at its
  // first tries, not a lease duration later.
  auto c = Candidate(client, ns, "c");
  c->Start();
  absl::SleepFor(2 * kRetry);  // c has seen the Lease held
  absl::Time released = absl::Now();
  second->Stop(/*release=*/true);
  ASSERT_EQ(AwaitLeader({c.get()}, kLease), c.get());
  EXPECT_LT(absl::Now() - released, kLease - kRetry) << "waited as if the leader had died";
  c->Stop();
  EXPECT_EQ(overlaps.count(), 0) << "two candidates led at once";
}

TEST(LeaderElectionTest, ALeaderCutOffStopsLeadingBeforeAnotherMayTakeTheLease) {
  const std::string ns = Testbed::Get().NewNamespace("lease-cut");
  TcpProxy proxy(Testbed::Get().apiserver_port());
  kube::ApiClient through_proxy(Testbed::Get().AdminConnection(proxy.port()));
  auto cut_off = Candidate(through_proxy, ns, "cut-off");
  cut_off->Start();
  ASSERT_EQ(AwaitLeader({cut_off.get()}, absl::Seconds(10)), cut_off.get());
  auto other = Candidate(Testbed::Get().admin(), ns, "other");
  other->Start();
  absl::SleepFor(2 * kRetry);
  Overlaps overlaps({cut_off.get(), other.get()});
  absl::Time cut = absl::Now();
  proxy.Cut();
  // The cut-off leader gives up by its renewal deadline...
  while (cut_off->IsLeader() && absl::Now() - cut < kLease) absl::SleepFor(absl::Milliseconds(5));
  absl::Duration stepped_down = absl::Now() - cut;
  EXPECT_FALSE(cut_off->IsLeader());
  EXPECT_LE(stepped_down, kRenew + absl::Milliseconds(100));
  // ... and only then may the other take the Lease.
  ASSERT_EQ(AwaitLeader({other.get()}, kLease + absl::Seconds(3)), other.get());
  EXPECT_EQ(overlaps.count(), 0) << "two candidates led at once";
  EXPECT_EQ(Holder(ns), "other");
  // Reconnected, the former leader sees the new one and does not lead.
  proxy.Restore();
  absl::SleepFor(3 * kRetry);
  EXPECT_FALSE(cut_off->IsLeader());
  EXPECT_EQ(cut_off->leader(), "other");
  other->Stop();
  cut_off->Stop();
}

TEST(LeaderElectionConfigTest, DurationsOutOfOrderAreRefusedNamingTheField) {
  const kube::ApiClient& client = Testbed::Get().admin();
  auto make = [&](absl::Duration lease, absl::Duration renew, absl::Duration retry) {
    return kube::LeaderElector::Create(client, {.namespace_ = "ns",
                                                .name = "lease",
                                                .identity = "me",
                                                .lease_duration = lease,
                                                .renew_deadline = renew,
                                                .retry_period = retry})
        .status();
  };
  EXPECT_TRUE(make(absl::Seconds(15), absl::Seconds(10), absl::Seconds(2)).ok());
  EXPECT_THAT(make(absl::Seconds(10), absl::Seconds(10), absl::Seconds(2)).message(),
              ::testing::HasSubstr("lease_duration"));
  EXPECT_THAT(make(absl::Seconds(15), absl::Seconds(2), absl::Seconds(2)).message(),
              ::testing::HasSubstr("renew_deadline"));
  EXPECT_THAT(make(absl::Seconds(15), absl::Seconds(10), absl::ZeroDuration()).message(),
              ::testing::HasSubstr("retry_period"));
  EXPECT_FALSE(kube::LeaderElector::Create(client, {.namespace_ = "ns", .name = "lease"}).ok());
}

}  // namespace
}  // namespace wm::testing
