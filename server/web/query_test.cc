#include "server/web/query.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::web {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(QueryTest, DecodesRepeatsAndKeepsOrder) {
  auto query = Query::Parse("kind=JobSet&kind=jobsets&namespace=team%2Da&labelSelector=a%3Db+c",
                            {"kind", "namespace", "labelSelector"});
  ASSERT_TRUE(query.ok()) << query.status();
  EXPECT_THAT(query->GetAll("kind"), ElementsAre("JobSet", "jobsets"));
  EXPECT_EQ(query->Get("kind"), "jobsets");  // the last one
  EXPECT_EQ(query->Get("namespace"), "team-a");
  EXPECT_EQ(query->Get("labelSelector"), "a=b c");
  EXPECT_EQ(query->Get("absent"), "");
}

TEST(QueryTest, RefusesUnknownNamesAndMalformedEscapesNamingThem) {
  auto unknown = Query::Parse("namespce=x", {"namespace"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown parameter \"namespce\""));
  EXPECT_THAT(unknown.status().message(), HasSubstr("this path takes namespace"));
  auto escape = Query::Parse("namespace=a%2", {"namespace"});
  ASSERT_FALSE(escape.ok());
  EXPECT_THAT(escape.status().message(), HasSubstr("query parameter namespace: malformed"));
  EXPECT_FALSE(Query::Parse("namespace=%zz", {"namespace"}).ok());
  EXPECT_FALSE(Query::Parse("=x", {"namespace"}).ok());
  auto control = Query::Parse("namespace=a%0Ab", {"namespace"});
  ASSERT_FALSE(control.ok());
  EXPECT_THAT(control.status().message(), HasSubstr("control character"));
}

TEST(QueryTest, BooleansAndIntegersAreChecked) {
  auto query = Query::Parse("a=true&b=0&c=maybe&n=12&m=-1&big=99999999999",
                            {"a", "b", "c", "n", "m", "big"});
  ASSERT_TRUE(query.ok());
  EXPECT_TRUE(*query->GetBool("a"));
  EXPECT_FALSE(*query->GetBool("b"));
  EXPECT_FALSE(*query->GetBool("absent"));
  EXPECT_FALSE(query->GetBool("c").ok());
  EXPECT_EQ(*query->GetInt("n", 100), 12);
  EXPECT_EQ(*query->GetInt("absent", 100), 0);
  EXPECT_FALSE(query->GetInt("m", 100).ok());
  EXPECT_THAT(query->GetInt("big", 1000).status().message(),
              HasSubstr("want an integer from 0 to 1000"));
}

TEST(QueryTest, EmptyQueryAndEmptyParts) {
  auto query = Query::Parse("&&", {});
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(query->Get("x"), "");
}

}  // namespace
}  // namespace wm::web
