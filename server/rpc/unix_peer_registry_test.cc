#include "server/rpc/unix_peer_registry.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace wm::rpc {
namespace {

TEST(UnixPeerRegistryTest, OnlyConnectionsHandedOverByDescriptorHaveAPeer) {
  UnixPeerRegistry peers;
  peers.Remember(7, {.uid = 1000, .gid = 2000, .pid = 3});
  std::optional<UnixPeerRegistry::UnixPeer> peer = peers.Find("fd:7");
  ASSERT_TRUE(peer.has_value());
  EXPECT_EQ(peer->uid, 1000u);
  EXPECT_EQ(peer->gid, 2000u);
  EXPECT_EQ(peer->pid, 3);
  EXPECT_FALSE(peers.Find("fd:8").has_value());
  EXPECT_FALSE(peers.Find("ipv4:127.0.0.1:7").has_value());
  EXPECT_FALSE(peers.Find("unix:/run/x.sock").has_value());
  EXPECT_FALSE(peers.Find("fd:").has_value());
  EXPECT_FALSE(peers.Find("fd:7x").has_value());
}

TEST(UnixPeerRegistryTest, AReusedDescriptorNamesItsNewConnection) {
  UnixPeerRegistry peers;
  peers.Remember(9, {.uid = 1, .gid = 1, .pid = 10});
  peers.Remember(9, {.uid = 2, .gid = 2, .pid = 11});
  EXPECT_EQ(peers.Find("fd:9")->uid, 2u);
}

// For TSan: an acceptor remembering connections while calls on other
// threads look their peers up, as the daemon's listener and gRPC's callback
// threads do.
TEST(UnixPeerRegistryTest, ConcurrentRememberAndFind) {
  UnixPeerRegistry peers;
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  std::thread acceptor([&] {
    for (uint32_t i = 0; i < 20000; ++i) {
      int fd = static_cast<int>(i % 64);
      peers.Remember(fd, {.uid = static_cast<uint32_t>(fd), .gid = i, .pid = 1});
    }
    done = true;
  });
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&, t] {
      while (!done) {
        for (int fd = t; fd < 64; fd += 3) {
          auto peer = peers.Find("fd:" + std::to_string(fd));
          if (peer && peer->uid != static_cast<uint32_t>(fd)) wrong.fetch_add(1);
        }
      }
    });
  }
  acceptor.join();
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_TRUE(peers.Find("fd:63").has_value());
}

}  // namespace
}  // namespace wm::rpc
