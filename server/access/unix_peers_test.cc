#include "server/access/unix_peers.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/access/authenticator.h"

namespace wm::access {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(UnixPeerTableTest, AUidNamesItsUserBeforeItsGroup) {
  UnixPeerTable table;
  ASSERT_TRUE(table.Add("uid:1000=system:serviceaccount:kai:kai-scheduler").ok());
  ASSERT_TRUE(table.Add("gid:2000=platform-tools; ops ;auditors").ok());
  std::optional<SharedIdentity> by_uid = table.Find(1000, 2000);
  ASSERT_TRUE(by_uid.has_value());
  EXPECT_EQ((*by_uid)->user, "system:serviceaccount:kai:kai-scheduler");
  EXPECT_TRUE((*by_uid)->groups.empty());
  std::optional<SharedIdentity> by_gid = table.Find(1001, 2000);
  ASSERT_TRUE(by_gid.has_value());
  EXPECT_EQ((*by_gid)->user, "platform-tools");
  EXPECT_THAT((*by_gid)->groups, ElementsAre("ops", "auditors"));
  EXPECT_FALSE(table.Find(1001, 2001).has_value());
  EXPECT_FALSE(table.empty());
  EXPECT_TRUE(UnixPeerTable().empty());
}

TEST(UnixPeerTableTest, MalformedLinesAreRefusedSayingWhy) {
  struct Case {
    const char* line;
    const char* why;
  };
  for (const Case& c :
       {Case{"1000=alice", "neither uid:UID nor gid:GID"}, Case{"uid:1000", "no '='"},
        Case{"uid:=alice", "not a number"}, Case{"uid:-1=alice", "not a number"},
        Case{"uid:4294967296=alice", "not a number"}, Case{"gid:12x=alice", "not a number"},
        Case{"uid:7=", "an empty user or group name"},
        Case{"uid:7=alice;;ops", "an empty user or group name"}}) {
    absl::Status status = CheckUnixPeerIdentity(c.line);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.line;
    EXPECT_THAT(status.message(), HasSubstr(c.why)) << c.line;
    EXPECT_THAT(status.message(), HasSubstr(c.line));
  }
  UnixPeerTable table;
  ASSERT_TRUE(table.Add("uid:7=alice").ok());
  EXPECT_THAT(table.Add("uid:7=bob").message(), HasSubstr("uid:7 is named twice"));
  EXPECT_TRUE(table.Add("gid:7=bob").ok());  // another key space
}

TEST(UnixPeerTableTest, TheAuthenticatorNamesAPeerWithoutAToken) {
  UnixPeerTable table;
  ASSERT_TRUE(table.Add("uid:1000=kai;schedulers").ok());
  Authenticator authenticator(
      {.client_certificates = false, .tokens = nullptr, .unix_peers = &table});
  CallerCredentials known;
  known.unix_peer = CallerCredentials::UnixPeer{.uid = 1000, .gid = 1000, .pid = 42};
  absl::StatusOr<SharedIdentity> identity = authenticator.Authenticate(known);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ((*identity)->user, "kai");
  EXPECT_THAT((*identity)->groups, ElementsAre("schedulers", "system:authenticated"));
  // Never blocks: the table is in memory.
  EXPECT_TRUE(authenticator.AuthenticateWithoutBlocking(known).has_value());

  CallerCredentials stranger;
  stranger.unix_peer = CallerCredentials::UnixPeer{.uid = 1001, .gid = 1001, .pid = 43};
  identity = authenticator.Authenticate(stranger);
  EXPECT_TRUE(absl::IsUnauthenticated(identity.status()));
  EXPECT_THAT(identity.status().message(), HasSubstr("(uid 1001, gid 1001) is not in"));

  // A token, when sent, is the credential that counts.
  CallerCredentials with_token = known;
  with_token.bearer_token = "t";
  EXPECT_THAT(authenticator.Authenticate(with_token).status().message(),
              HasSubstr("bearer tokens are not accepted here"));

  // Without a table, a Unix peer is no credential at all.
  Authenticator no_table({.client_certificates = false, .tokens = nullptr});
  EXPECT_TRUE(absl::IsUnauthenticated(no_table.Authenticate(known).status()));
}

}  // namespace
}  // namespace wm::access
