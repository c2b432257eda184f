#include "server/resolution/pods.h"

#include "gtest/gtest.h"

namespace wm::resolution {
namespace {

// An object with a uid, controlled by `controller_uid` when it is given.
Json Object(const char* kind, const char* uid, const char* controller_uid = nullptr) {
  Json o = {{"kind", kind}, {"metadata", {{"name", uid}, {"uid", uid}}}};
  if (controller_uid != nullptr) {
    o["metadata"]["ownerReferences"] = {{{"uid", controller_uid}, {"controller", true}}};
  }
  return o;
}

// A LeaderWorkerSet group: a worker pod owned by a StatefulSet that the
// group's leader pod owns, which the LeaderWorkerSet owns. The chain
// passes through a pod, so the index must hold pods as well as owners.
TEST(OwnedByTest, ChainsPassThroughPods) {
  Json lws = Object("LeaderWorkerSet", "lws");
  Json leader = Object("Pod", "leader", "lws");
  Json workers = Object("StatefulSet", "workers", "leader");
  Json worker = Object("Pod", "worker", "workers");
  Json stranger = Object("Pod", "stranger", "elsewhere");
  OwnerIndex index;
  for (const Json* o : {&workers, &leader, &worker, &stranger}) {
    index.try_emplace(o->at("metadata").at("uid").get_ref<const std::string&>(), o);
  }
  EXPECT_TRUE(OwnedBy(ReadPod(worker), "lws", index));
  EXPECT_TRUE(OwnedBy(ReadPod(leader), "lws", index));
  EXPECT_FALSE(OwnedBy(ReadPod(stranger), "lws", index));
  EXPECT_TRUE(OwnedBy(ReadPod(lws), "lws", index));  // the root owns itself
  EXPECT_FALSE(OwnedBy(ReadPod(worker), "lws", index, /*max_depth=*/2));
  EXPECT_FALSE(OwnedBy(ReadPod(worker), "", index));
}

}  // namespace
}  // namespace wm::resolution
