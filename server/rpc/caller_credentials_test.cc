#include "server/rpc/caller_credentials.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::rpc {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(OrganizationsOfSubjectTest, TakesEveryOAttributeWithEscapesUndone) {
  EXPECT_THAT(OrganizationsOfSubject("CN=kai,O=schedulers,O=ops"),
              ElementsAre("schedulers", "ops"));
  EXPECT_THAT(OrganizationsOfSubject("O=a\\,b+CN=x, O = spaced"), ElementsAre("a,b"));
  EXPECT_THAT(OrganizationsOfSubject("CN=x,OU=not-an-o,o=lower"), ElementsAre("lower"));
  EXPECT_THAT(OrganizationsOfSubject("CN=only"), IsEmpty());
  EXPECT_THAT(OrganizationsOfSubject(""), IsEmpty());
}

}  // namespace
}  // namespace wm::rpc
