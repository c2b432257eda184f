// Which mode answers (flags, environment, config file), what kubeconfig
// mode reads from the kubeconfig, and its progress and errors against a
// scripted apiserver. Kubeconfig mode against the real apiserver, next to
// daemon mode, is integration_tests/wmctl/kubeconfig_test.sh.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "client/wmctl/snapshot_daemon.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/kube/testing/scripted_server.h"

namespace wm::wmctl {
namespace {

using kube::testing::ScriptedServer;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class KubeconfigModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/wmctl-kubeconfig-", getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A kubeconfig with contexts "team" (namespace ml-team, current) and
  // "plain" (no namespace) on `server`.
  std::string Kubeconfig(const std::string& server) {
    std::string path = dir_ + "/kubeconfig";
    std::ofstream(path) << "apiVersion: v1\nkind: Config\n"
                        << "clusters:\n- name: c\n  cluster: {server: \"" << server << "\"}\n"
                        << "users:\n- name: u\n  user: {token: t}\n"
                        << "contexts:\n"
                        << "- name: team\n  context: {cluster: c, user: u, namespace: ml-team}\n"
                        << "- name: plain\n  context: {cluster: c, user: u}\n"
                        << "current-context: team\n";
    return path;
  }

  std::string dir_;
};

TEST_F(KubeconfigModeTest, VersionNamesTheModeAndWhy) {
  std::string kubeconfig = Kubeconfig("https://127.0.0.1:6443");
  Result plain = RunCli({"version"}, {{"KUBECONFIG", kubeconfig}});
  EXPECT_EQ(plain.code, 0) << plain.err;
  EXPECT_THAT(plain.out, StartsWith("wmctl "));
  EXPECT_THAT(plain.out, HasSubstr("\nmode: kubeconfig (context team at https://127.0.0.1:6443, "
                                   "namespace ml-team; no daemon address configured)\n"));
  // -n, then $WMCTL_NAMESPACE, over the context's namespace; the config
  // file's namespace is a daemon-mode setting.
  std::string config = dir_ + "/config.yaml";
  std::ofstream(config) << "namespace: from-file\n";
  Result file = RunCli({"version", "--context", "plain"},
                       {{"KUBECONFIG", kubeconfig}, {"WMCTL_CONFIG", config}});
  EXPECT_THAT(file.out, HasSubstr("namespace default; --context)\n"));
  Result env = RunCli({"version"}, {{"KUBECONFIG", kubeconfig}, {"WMCTL_NAMESPACE", "from-env"}});
  EXPECT_THAT(env.out, HasSubstr("namespace from-env; "));
  Result flag = RunCli({"version", "-n", "x"}, {{"KUBECONFIG", kubeconfig}});
  EXPECT_THAT(flag.out, HasSubstr("namespace x; "));

  // An address from anywhere is daemon mode, unless a kubeconfig-mode flag
  // is given on the command line.
  Result address_env = RunCli({"version"}, {{"WM_ADDRESS", "127.0.0.1:7"}});
  EXPECT_THAT(address_env.out,
              HasSubstr("\nmode: daemon (workloadmapd at 127.0.0.1:7, from $WM_ADDRESS)\n"));
  std::ofstream(config) << "address: 127.0.0.1:8\n";
  Result address_file = RunCli({"version"}, {{"WMCTL_CONFIG", config}});
  EXPECT_THAT(address_file.out, HasSubstr("(workloadmapd at 127.0.0.1:8, from config file "));
  Result address_flag = RunCli({"--version", "--address", "127.0.0.1:9"}, {});
  EXPECT_THAT(address_flag.out, HasSubstr("(workloadmapd at 127.0.0.1:9, from --address)\n"));
  Result context_flag = RunCli({"version", "--context", "plain"},
                               {{"WM_ADDRESS", "127.0.0.1:7"}, {"KUBECONFIG", kubeconfig}});
  EXPECT_THAT(context_flag.out, HasSubstr("mode: kubeconfig (context plain at "));

  // Without any kubeconfig: still a version, and why no mode can work.
  Result none = RunCli({"version"}, {});
  EXPECT_EQ(none.code, 0);
  EXPECT_THAT(none.out, HasSubstr("mode: kubeconfig (no daemon address configured), but no "
                                  "usable kubeconfig: no kubeconfig: "));
}

TEST_F(KubeconfigModeTest, ModeFlagConflictsAreUsageErrors) {
  std::string kubeconfig = Kubeconfig("https://127.0.0.1:6443");
  struct Case {
    std::vector<std::string> argv;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{"get", "--address", "127.0.0.1:1", "--kubeconfig", kubeconfig},
            "error: --address (daemon mode) and --kubeconfig (kubeconfig mode) do not go together"},
           {{"get", "--cluster", "c"},
            "error: --cluster is for daemon mode (--address); wmctl is in kubeconfig mode (no "
            "daemon address configured): --context picks the cluster"},
           {{"describe", "JobSet/demo", "--tls"}, "error: --tls is for daemon mode (--address)"},
           {{"gang", "p", "--definitions", "x", "--address", "127.0.0.1:1"},
            "error: gang asks workloadmapd (daemon mode, --address) and does not take "
            "--definitions"},
           {{"get", "--request-timeout", "-1s"}, "error: --request-timeout needs a duration"},
           {{"describe", "-f", "x", "--context", "c"},
            "error: describe -f works offline and does not take --context"}}) {
    Result r = RunCli(c.argv, {{"KUBECONFIG", kubeconfig}});
    EXPECT_EQ(r.code, 2) << c.argv[0] << " " << r.err;
    EXPECT_THAT(r.err, StartsWith(c.error));
  }
  // A missing kubeconfig: a configuration error that points at --address.
  Result missing = RunCli({"get", "--kubeconfig", dir_ + "/none"}, {});
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("(kubeconfig mode: no daemon address configured by "
                                     "--address, $WM_ADDRESS or the config file)\n"));
}

TEST_F(KubeconfigModeTest, UnreachableApiServerExitsOne) {
  std::string kubeconfig = Kubeconfig(absl::StrCat("http://127.0.0.1:", testing::FreePort()));
  Result r = RunCli({"get", "--kubeconfig", kubeconfig}, {});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, StartsWith("error: context team: "));
}

// A scripted apiserver that serves only pods, and takes 1.5 s to list
// them: wmctl says on stderr what it waits for, then answers.
TEST_F(KubeconfigModeTest, ProgressOnStderrWhenListingTakesLongerThanASecond) {
  ScriptedServer server([](const ScriptedServer::Request& r, ScriptedServer::Responder& out) {
    out.Head(200, {{"Content-Type", "application/json"}});
    if (r.path == "/api") {
      out.Write(R"({"kind":"APIVersions","versions":["v1"]})");
    } else if (r.path == "/apis") {
      out.Write(R"({"kind":"APIGroupList","groups":[]})");
    } else if (r.path == "/api/v1") {
      out.Write(R"({"kind":"APIResourceList","groupVersion":"v1","resources":[
        {"name":"pods","namespaced":true,"kind":"Pod","verbs":["list","watch"]}]})");
    } else if (r.Query("watch") == "1" && r.Query("sendInitialEvents") != "true") {
      out.Sleep(absl::Seconds(2));  // a watch with nothing to say
    } else {
      out.Sleep(absl::Milliseconds(1500));
      if (r.Query("watch") == "1") {  // WatchList: the initial events end at once
        out.Write(R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{)"
                  R"("resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}})"
                  "\n");
        out.Sleep(absl::Seconds(2));
      } else {
        out.Write(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},)"
                  R"("items":[]})");
      }
    }
  });
  std::string kubeconfig = Kubeconfig(server.url());
  Result r = RunCli({"get", "--kubeconfig", kubeconfig, "-o", "json"}, {});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out), Json::parse(R"({"items": [], "count": 0, "mode": "kubeconfig"})"));
  EXPECT_THAT(r.err, StartsWith("wmctl: listing from context team (namespace ml-team): "));
  EXPECT_THAT(r.err, HasSubstr(" kinds listed, waiting for pods.v1\n"));
}

}  // namespace
}  // namespace wm::wmctl
