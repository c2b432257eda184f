#include "server/common/kube_names.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(KubeNamesTest, QualifiedNames) {
  for (const char* valid :
       {"app", "App.Name_1", "a", "example.com/role", "k8s.io/x-y", "nvidia.com/gpu", "9"}) {
    EXPECT_THAT(QualifiedNameProblem(valid), IsEmpty()) << valid;
  }
  EXPECT_THAT(QualifiedNameProblem(std::string(63, 'a')), IsEmpty());
  EXPECT_THAT(QualifiedNameProblem(std::string(64, 'a')),
              HasSubstr("name part must be no more than 63 characters (it has 64)"));
  EXPECT_THAT(QualifiedNameProblem(std::string(253, 'a') + "/x"), IsEmpty());
  EXPECT_THAT(QualifiedNameProblem(std::string(254, 'a') + "/x"),
              HasSubstr("prefix part must be no more than 253 characters"));
  EXPECT_THAT(QualifiedNameProblem(""), HasSubstr("name part must be non-empty"));
  EXPECT_THAT(QualifiedNameProblem("example.com/"), HasSubstr("name part must be non-empty"));
  EXPECT_THAT(QualifiedNameProblem("/x"), HasSubstr("prefix part must be non-empty"));
  EXPECT_THAT(QualifiedNameProblem("a/b/c"), HasSubstr("optional DNS subdomain prefix"));
  EXPECT_THAT(QualifiedNameProblem("Example.com/x"), HasSubstr("prefix part must be a lowercase"));
  for (const char* invalid : {"-app", "app-", "a b", "a:b", "_a", "é"}) {
    EXPECT_THAT(QualifiedNameProblem(invalid), HasSubstr("name part must be alphanumeric"))
        << invalid;
  }
}

TEST(KubeNamesTest, LabelValues) {
  for (const char* valid : {"", "v1", "A.b-c_d", "9"}) {
    EXPECT_THAT(LabelValueProblem(valid), IsEmpty()) << valid;
  }
  EXPECT_THAT(LabelValueProblem(std::string(63, 'v')), IsEmpty());
  EXPECT_THAT(LabelValueProblem(std::string(64, 'v')),
              HasSubstr("must be no more than 63 characters (it has 64)"));
  for (const char* invalid : {"a/b", "-v", "v.", "two words"}) {
    EXPECT_THAT(LabelValueProblem(invalid), HasSubstr("must be empty or alphanumeric")) << invalid;
  }
}

TEST(KubeNamesTest, Dns1123Subdomains) {
  for (const char* valid : {"kai-scheduler", "default-scheduler", "a.b.c", "0"}) {
    EXPECT_THAT(Dns1123SubdomainProblem(valid), IsEmpty()) << valid;
  }
  EXPECT_THAT(Dns1123SubdomainProblem(std::string(253, 'a')), IsEmpty());
  EXPECT_THAT(Dns1123SubdomainProblem(std::string(254, 'a')),
              HasSubstr("must be no more than 253 characters"));
  for (const char* invalid : {"", "Kai", "a..b", "-a", "a-", "a_b", ".a"}) {
    EXPECT_THAT(Dns1123SubdomainProblem(invalid), HasSubstr("lowercase RFC 1123 subdomain"))
        << invalid;
  }
}

TEST(KubeNamesTest, Dns1123Labels) {
  EXPECT_THAT(Dns1123LabelProblem("ml-team"), IsEmpty());
  EXPECT_THAT(Dns1123LabelProblem(std::string(63, 'a')), IsEmpty());
  EXPECT_THAT(Dns1123LabelProblem(std::string(64, 'a')),
              HasSubstr("must be no more than 63 characters"));
  for (const char* invalid : {"", "a.b", "ML", "-a"}) {
    EXPECT_THAT(Dns1123LabelProblem(invalid), HasSubstr("lowercase RFC 1123 label")) << invalid;
  }
}

}  // namespace
}  // namespace wm
