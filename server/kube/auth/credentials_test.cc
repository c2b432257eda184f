#include "server/kube/auth/credentials.h"

#include <signal.h>

#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/file.h"
#include "server/common/json.h"
#include "server/kube/auth/test_util.h"

namespace wm::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kV1[] = "client.authentication.k8s.io/v1";
constexpr char kV1beta1[] = "client.authentication.k8s.io/v1beta1";

// Counts its runs in ./count and saves KUBERNETES_EXEC_INFO to ./info.json.
constexpr char kPrelude[] = R"sh(d=$(dirname "$0")
n=$(cat "$d/count" 2>/dev/null || echo 0)
n=$((n+1))
echo "$n" > "$d/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$d/info.json"
)sh";

// A plugin printing `json` (a shell here-document: $n is the run number).
std::string PrintingPlugin(const std::string& json) {
  return absl::StrCat(kPrelude, "cat <<EOF\n", json, "\nEOF\n");
}

class CredentialsTest : public testing::TempDirTest {
 protected:
  int Runs() {
    int n = 0;
    std::string text = Read("count");
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &n)) return 0;
    return n;
  }

  ExecConfig Config(const std::string& script) {
    ExecConfig config;
    config.api_version = kV1;
    config.command = dir_ + "/" + script;
    config.base_dir = dir_;
    return config;
  }

  ExecOptions Options() {
    ExecOptions options;
    options.clock = clock_.AsClock();
    options.timeout = absl::Seconds(20);
    return options;
  }

  testing::FakeClock clock_;
};

TEST_F(CredentialsTest, StaticTokenNeverChanges) {
  auto source = StaticToken("abc");
  ASSERT_TRUE(source->Current().ok());
  EXPECT_EQ(source->Current()->bearer_token, "abc");
  source->Invalidate(*source->Current());
  EXPECT_EQ(source->Current()->bearer_token, "abc");
  EXPECT_FALSE(source->Current()->expiry.has_value());
}

TEST_F(CredentialsTest, TokenFileRereadsAfterInterval) {
  std::string path = Write("token", "  tok1\n");
  auto source = TokenFile(path, absl::Minutes(1), clock_.AsClock());
  absl::StatusOr<Credential> first = source->Current();
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->bearer_token, "tok1");

  Write("token", "tok2\n");
  clock_.Advance(absl::Seconds(59));
  EXPECT_EQ(source->Current()->bearer_token, "tok1");  // still cached
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(source->Current()->bearer_token, "tok2");
}

TEST_F(CredentialsTest, TokenFileInvalidateRereadsAtOnce) {
  std::string path = Write("token", "tok1");
  auto source = TokenFile(path, absl::Minutes(1), clock_.AsClock());
  Credential first = *source->Current();
  Write("token", "tok2");
  EXPECT_EQ(source->Current()->bearer_token, "tok1");
  source->Invalidate(first);
  EXPECT_EQ(source->Current()->bearer_token, "tok2");

  // Rejecting a credential that is no longer the cached one changes nothing.
  Write("token", "tok3");
  source->Invalidate(first);
  EXPECT_EQ(source->Current()->bearer_token, "tok2");
}

TEST_F(CredentialsTest, TokenFileErrorsNameThePath) {
  std::string missing = dir_ + "/nope";
  absl::StatusOr<Credential> got = TokenFile(missing)->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr(missing));

  std::string empty = Write("empty", " \n\t");
  got = TokenFile(empty)->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr(empty));
  EXPECT_THAT(got.status().message(), HasSubstr("empty"));
}

TEST_F(CredentialsTest, TokenFileKeepsLastGoodTokenUntilRejected) {
  std::string path = Write("token", "tok1");
  auto source = TokenFile(path, absl::Minutes(1), clock_.AsClock());
  Credential first = *source->Current();
  std::filesystem::remove(path);
  clock_.Advance(absl::Minutes(2));
  ASSERT_TRUE(source->Current().ok());
  EXPECT_EQ(source->Current()->bearer_token, "tok1");
  source->Invalidate(first);
  absl::StatusOr<Credential> got = source->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr(path));
  // The file comes back: so does the source.
  Write("token", "tok2");
  EXPECT_EQ(source->Current()->bearer_token, "tok2");
}

TEST_F(CredentialsTest, ExecV1PassesEnvironmentAndExecInfo) {
  WriteScript("plugin.sh",
              PrintingPlugin(absl::StrCat(
                  R"({"apiVersion":")", kV1,
                  R"(","kind":"ExecCredential","status":{"token":"tok-$n-$GREETING"}})")));
  ExecConfig config = Config("plugin.sh");
  config.env = {{"GREETING", "hello"}};
  config.args = {"--flag"};
  auto source = ExecPlugin(config, {.server = "https://example:6443"}, Options());
  absl::StatusOr<Credential> got = source->Current();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->bearer_token, "tok-1-hello");
  EXPECT_FALSE(got->expiry.has_value());
  EXPECT_TRUE(got->client_cert_pem.empty());

  Json info = Json::parse(Read("info.json"), nullptr, false);
  ASSERT_FALSE(info.is_discarded()) << Read("info.json");
  EXPECT_EQ(info["apiVersion"], kV1);
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_FALSE(info["spec"].contains("cluster"));  // provideClusterInfo not set
}

TEST_F(CredentialsTest, ExecV1beta1WithClusterInfoAndClientCertificate) {
  WriteScript("plugin.sh", PrintingPlugin(absl::StrCat(
                               R"({"apiVersion":")", kV1beta1,
                               R"(","kind":"ExecCredential","status":{"clientCertificateData":)",
                               R"("CERT","clientKeyData":"KEY"}})")));
  ExecConfig config = Config("plugin.sh");
  config.api_version = kV1beta1;
  config.provide_cluster_info = true;
  config.interactive_mode = "IfAvailable";
  ExecClusterInfo cluster{.server = "https://10.0.0.1:6443",
                          .certificate_authority_data_base64 = "Q0E=",
                          .insecure_skip_tls_verify = false,
                          .tls_server_name = "kubernetes",
                          .proxy_url = ""};
  absl::StatusOr<Credential> got = ExecPlugin(config, cluster, Options())->Current();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->client_cert_pem, "CERT");
  EXPECT_EQ(got->client_key_pem, "KEY");
  EXPECT_EQ(got->bearer_token, "");

  Json info = Json::parse(Read("info.json"), nullptr, false);
  ASSERT_FALSE(info.is_discarded());
  EXPECT_EQ(info["apiVersion"], kV1beta1);
  EXPECT_EQ(info["spec"]["cluster"]["server"], "https://10.0.0.1:6443");
  EXPECT_EQ(info["spec"]["cluster"]["certificate-authority-data"], "Q0E=");
  EXPECT_EQ(info["spec"]["cluster"]["tls-server-name"], "kubernetes");
  EXPECT_FALSE(info["spec"]["cluster"].contains("insecure-skip-tls-verify"));
}

TEST_F(CredentialsTest, ExecStdinIsEmptyAndPathLookupWorks) {
  // "sh" has no slash: found through $PATH. Reading stdin must not block.
  ExecConfig config;
  config.api_version = kV1;
  config.command = "sh";
  config.args = {
      "-c",
      absl::StrCat(R"(input=$(cat); printf '{"apiVersion":"%s","kind":)",
                   R"("ExecCredential","status":{"token":"len-%s"}}' "$0" )", R"("${#input}")"),
      kV1};
  absl::StatusOr<Credential> got = ExecPlugin(config, {}, Options())->Current();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->bearer_token, "len-0");
}

TEST_F(CredentialsTest, ExecRelativeCommandResolvesAgainstBaseDir) {
  WriteScript("bin/plugin.sh", PrintingPlugin(absl::StrCat(
                                   R"({"apiVersion":")", kV1,
                                   R"(","kind":"ExecCredential","status":{"token":"rel"}})")));
  ExecConfig config = Config("unused");
  config.command = "./bin/plugin.sh";
  absl::StatusOr<Credential> got = ExecPlugin(config, {}, Options())->Current();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->bearer_token, "rel");
}

TEST_F(CredentialsTest, ExecCachesUntilInvalidated) {
  WriteScript("plugin.sh", PrintingPlugin(absl::StrCat(
                               R"({"apiVersion":")", kV1,
                               R"(","kind":"ExecCredential","status":{"token":"tok-$n"}})")));
  auto source = ExecPlugin(Config("plugin.sh"), {}, Options());
  Credential first = *source->Current();
  EXPECT_EQ(first.bearer_token, "tok-1");
  clock_.Advance(absl::Hours(5));
  EXPECT_EQ(source->Current()->bearer_token, "tok-1");
  EXPECT_EQ(Runs(), 1);

  Credential stale;
  stale.bearer_token = "tok-0";
  source->Invalidate(stale);  // not the cached one: ignored
  EXPECT_EQ(source->Current()->bearer_token, "tok-1");
  EXPECT_EQ(Runs(), 1);

  source->Invalidate(first);
  EXPECT_EQ(source->Current()->bearer_token, "tok-2");
  EXPECT_EQ(Runs(), 2);
}

TEST_F(CredentialsTest, ExecRunsOnceForConcurrentCallers) {
  WriteScript("plugin.sh", PrintingPlugin(absl::StrCat(
                               R"({"apiVersion":")", kV1,
                               R"(","kind":"ExecCredential","status":{"token":"tok-$n"}})")));
  auto source = ExecPlugin(Config("plugin.sh"), {}, Options());
  std::vector<std::thread> threads;
  std::vector<std::string> tokens(8);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<Credential> got = source->Current();
      tokens[i] = got.ok() ? got->bearer_token : std::string(got.status().message());
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& token : tokens) EXPECT_EQ(token, "tok-1");
  EXPECT_EQ(Runs(), 1);
}

TEST_F(CredentialsTest, ExecRefreshesShortlyBeforeExpiry) {
  WriteScript("plugin.sh", PrintingPlugin(absl::StrCat(
                               R"({"apiVersion":")", kV1,
                               R"(","kind":"ExecCredential","status":{"token":"tok-$n",)",
                               R"("expirationTimestamp":"2030-01-01T00:00:00Z"}})")));
  const absl::Time expiry =
      absl::FromCivil(absl::CivilSecond(2030, 1, 1, 0, 0, 0), absl::UTCTimeZone());
  clock_.Set(expiry - absl::Minutes(1));
  auto source = ExecPlugin(Config("plugin.sh"), {}, Options());
  absl::StatusOr<Credential> got = source->Current();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->expiry.has_value());
  EXPECT_EQ(*got->expiry, expiry);
  EXPECT_EQ(got->bearer_token, "tok-1");

  clock_.Set(expiry - absl::Seconds(11));
  EXPECT_EQ(source->Current()->bearer_token, "tok-1");
  EXPECT_EQ(Runs(), 1);
  clock_.Set(expiry - absl::Seconds(5));  // inside the 10 s leeway
  EXPECT_EQ(source->Current()->bearer_token, "tok-2");
  EXPECT_EQ(Runs(), 2);
}

TEST_F(CredentialsTest, ExecExpiredCredentialIsNotReused) {
  WriteScript("plugin.sh", PrintingPlugin(absl::StrCat(
                               R"({"apiVersion":")", kV1,
                               R"(","kind":"ExecCredential","status":{"token":"tok-$n",)",
                               R"("expirationTimestamp":"2001-02-03T04:05:06+01:00"}})")));
  auto source = ExecPlugin(Config("plugin.sh"), {}, Options());
  EXPECT_EQ(source->Current()->bearer_token, "tok-1");
  EXPECT_EQ(source->Current()->bearer_token, "tok-2");
  EXPECT_EQ(*source->Current()->expiry, absl::FromUnixSeconds(981169506));
  EXPECT_EQ(Runs(), 3);
}

TEST_F(CredentialsTest, ExecNonZeroExitReportsCodeAndStderrAndIsRetried) {
  WriteScript("plugin.sh", absl::StrCat(kPrelude, "echo 'boom: no credentials' >&2\nexit 3\n"));
  auto source = ExecPlugin(Config("plugin.sh"), {}, Options());
  absl::StatusOr<Credential> got = source->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("exited with code 3"));
  EXPECT_THAT(got.status().message(), HasSubstr("boom: no credentials"));
  EXPECT_THAT(got.status().message(), HasSubstr("plugin.sh"));
  EXPECT_EQ(Runs(), 1);

  EXPECT_FALSE(source->Current().ok());  // within the retry interval: not run again
  EXPECT_EQ(Runs(), 1);
  clock_.Advance(absl::Seconds(2));
  EXPECT_FALSE(source->Current().ok());
  EXPECT_EQ(Runs(), 2);

  // Once the plugin works again, so does the source.
  WriteScript("plugin.sh", PrintingPlugin(absl::StrCat(
                               R"({"apiVersion":")", kV1,
                               R"(","kind":"ExecCredential","status":{"token":"tok-$n"}})")));
  clock_.Advance(absl::Seconds(2));
  got = source->Current();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->bearer_token, "tok-3");
}

TEST_F(CredentialsTest, ExecGarbageOutputIsInvalid) {
  WriteScript("plugin.sh", absl::StrCat(kPrelude, "echo 'this is not json {'\n"));
  absl::StatusOr<Credential> got = ExecPlugin(Config("plugin.sh"), {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("plugin.sh"));
  EXPECT_THAT(got.status().message(), HasSubstr("not an ExecCredential"));
}

TEST_F(CredentialsTest, ExecApiVersionMustMatch) {
  WriteScript("plugin.sh",
              PrintingPlugin(absl::StrCat(R"({"apiVersion":")", kV1beta1,
                                          R"(","kind":"ExecCredential","status":{"token":"t"}})")));
  absl::StatusOr<Credential> got = ExecPlugin(Config("plugin.sh"), {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr(kV1beta1));
  EXPECT_THAT(got.status().message(), HasSubstr(absl::StrCat("want \"", kV1, "\"")));

  ExecConfig alpha = Config("plugin.sh");
  alpha.api_version = "client.authentication.k8s.io/v1alpha1";
  got = ExecPlugin(alpha, {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("v1alpha1\" is not supported"));
  EXPECT_EQ(Runs(), 1);  // the unsupported version never ran
}

TEST_F(CredentialsTest, ExecIncompleteStatusIsRejected) {
  WriteScript("cert_only.sh",
              PrintingPlugin(absl::StrCat(
                  R"({"apiVersion":")", kV1,
                  R"(","kind":"ExecCredential","status":{"clientCertificateData":"C"}})")));
  absl::StatusOr<Credential> got = ExecPlugin(Config("cert_only.sh"), {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("only one of"));

  WriteScript("wrong_kind.sh",
              PrintingPlugin(absl::StrCat(R"({"apiVersion":")", kV1,
                                          R"(","kind":"Secret","status":{"token":"t"}})")));
  got = ExecPlugin(Config("wrong_kind.sh"), {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("kind \"Secret\""));

  WriteScript("bad_time.sh",
              PrintingPlugin(absl::StrCat(R"({"apiVersion":")", kV1,
                                          R"(","kind":"ExecCredential","status":{"token":"t",)",
                                          R"("expirationTimestamp":"tomorrow"}})")));
  got = ExecPlugin(Config("bad_time.sh"), {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("expirationTimestamp \"tomorrow\""));
}

TEST_F(CredentialsTest, ExecHangingPluginIsKilledAtTheTimeout) {
  // The shell waits on a child: both must die (the whole process group).
  WriteScript("plugin.sh", "sleep 30 &\necho $! > \"$(dirname \"$0\")/child\"\nwait\n");
  ExecOptions options = Options();
  options.timeout = absl::Seconds(1);
  absl::Time start = absl::Now();
  absl::StatusOr<Credential> got = ExecPlugin(Config("plugin.sh"), {}, options)->Current();
  absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(got.status().message(), HasSubstr("killed"));
  EXPECT_LT(took, absl::Seconds(10));
  EXPECT_GE(took, absl::Milliseconds(900));

  int child = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(Read("child")), &child));
  // Dead means gone or a zombie awaiting its new parent.
  bool dead = false;
  for (int i = 0; i < 200 && !dead; ++i) {
    // Empty once the process is gone.
    std::string content = ReadFileToString(absl::StrCat("/proc/", child, "/stat")).value_or("");
    size_t paren = content.rfind(')');
    dead = kill(child, 0) != 0 ||
           (paren != std::string::npos && paren + 2 < content.size() && content[paren + 2] == 'Z');
    if (!dead) absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(dead) << "sleep " << child << " survived";
}

TEST_F(CredentialsTest, ExecInteractiveAlwaysIsRejected) {
  WriteScript("plugin.sh", PrintingPlugin("{}"));
  ExecConfig config = Config("plugin.sh");
  config.interactive_mode = "Always";
  absl::StatusOr<Credential> got = ExecPlugin(config, {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(got.status().message(), HasSubstr("exec plugin requires interactive mode"));
  EXPECT_FALSE(Exists("count"));
}

TEST_F(CredentialsTest, ExecMissingCommandShowsInstallHint) {
  ExecConfig config;
  config.api_version = kV1;
  config.command = "wm-kube-auth-test-no-such-plugin";
  config.install_hint = "install it with: apt install no-such-plugin";
  absl::StatusOr<Credential> got = ExecPlugin(config, {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr("wm-kube-auth-test-no-such-plugin"));
  EXPECT_THAT(got.status().message(), HasSubstr("apt install no-such-plugin"));

  config.command = "./missing/plugin";
  config.base_dir = dir_;
  got = ExecPlugin(config, {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(got.status().message(), HasSubstr("apt install no-such-plugin"));
}

TEST_F(CredentialsTest, ExecOversizedOutputIsRejected) {
  WriteScript("plugin.sh", "head -c 2000000 /dev/zero\n");
  absl::StatusOr<Credential> got = ExecPlugin(Config("plugin.sh"), {}, Options())->Current();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(got.status().message(), Not(HasSubstr("exited")));
}

}  // namespace
}  // namespace wm::kube
