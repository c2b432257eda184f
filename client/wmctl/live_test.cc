// wmctl's daemon commands against a real workloadmapd serving a snapshot
// (SnapshotDaemonTest): what the golden files do not show — spellings that
// must print the same, filters, errors and exit codes, the settings'
// sources, the daemon and --offline agreeing, and the candidates of shell
// completion.
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/wmctl/completion.h"
#include "client/wmctl/snapshot_daemon.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/json.h"
#include "server/common/yaml_json.h"

namespace wm::wmctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

using LiveTest = SnapshotDaemonTest;

TEST_F(LiveTest, TypeSpellingsPrintTheSame) {
  Result expected = Run({"describe", "JobSet/demo"});
  ASSERT_EQ(expected.code, 0) << expected.err;
  EXPECT_THAT(expected.out, StartsWith("JobSet/demo   namespace: default"));
  for (const auto& argv :
       std::vector<std::vector<std::string>>{{"describe", "jobsets", "demo", "-n", "default"},
                                             {"describe", "jobsets.jobset.x-k8s.io/demo"},
                                             {"describe", "JobSet.jobset.x-k8s.io", "demo"}}) {
    Result r = Run(argv);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, expected.out) << absl::StrJoin(argv, " ");
  }
  Result listing = Run({"get"});
  ASSERT_EQ(listing.code, 0) << listing.err;
  EXPECT_THAT(listing.out, HasSubstr("\ndemo   JobSet   Running"));
  for (const auto& argv :
       std::vector<std::vector<std::string>>{{"get", "JobSet"},
                                             {"get", "jobsets"},
                                             {"get", "JobSet.jobset.x-k8s.io/demo"},
                                             {"get", "--all-types", "--phase", "Running,Failed"},
                                             {"get", "--phase", "Failed", "--phase", "Running"},
                                             {"get", "-l", "jobset.sigs.k8s.io/jobset-name!=x"}}) {
    Result r = Run(argv);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, listing.out) << absl::StrJoin(argv, " ");
  }
}

TEST_F(LiveTest, FiltersAndNotFound) {
  // Filters that keep nothing: an empty listing, not an error.
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"get", "--phase", "Failed"}, {"get", "-l", "app=none"}, {"get", "Deployment"}}) {
    Result empty = Run(argv);
    EXPECT_EQ(empty.code, 0) << argv[1] << ": " << empty.err;
    EXPECT_EQ(empty.out, "");
    EXPECT_EQ(empty.err, "No workloads found in namespace default.\n");
  }
  EXPECT_EQ(Run({"get", "-n", "other"}).err, "No workloads found in namespace other.\n");
  EXPECT_EQ(Json::parse(Run({"get", "-n", "other", "-o", "json"}).out),
            Json::parse(R"({"items": [], "count": 0, "mode": "daemon"})"));
  Result team = Run({"get", "-l", "team=research", "-A", "-o", "json"});
  ASSERT_EQ(team.code, 0) << team.err;
  EXPECT_EQ(Json::parse(team.out)["items"][0]["name"], "tune");
  EXPECT_EQ(Json::parse(team.out)["count"], 1);

  Result missing = Run({"get", "JobSet/nope"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_EQ(missing.err, "error: JobSet nope not found in namespace default\n");
  Result describe_missing = Run({"describe", "JobSet/nope"});
  EXPECT_EQ(describe_missing.code, 3);
  EXPECT_EQ(describe_missing.out, "");
  EXPECT_THAT(describe_missing.err, StartsWith("error: "));
  EXPECT_THAT(describe_missing.err, HasSubstr("nope not found"));
  EXPECT_EQ(Run({"describe", "JobSet/demo", "-n", "other"}).code, 3);
  Result gang_missing = Run({"gang", "nope"});
  EXPECT_EQ(gang_missing.code, 3);
  EXPECT_EQ(gang_missing.out, "");
  EXPECT_EQ(Run({"gang", "demo-worker-1-0-x1w", "-n", "ml-team"}).code, 3);
  EXPECT_EQ(Run({"definitions", "nope"}).code, 3);
  // A cluster the daemon does not serve.
  Result cluster = Run({"get", "--cluster", "elsewhere"});
  EXPECT_EQ(cluster.code, 3);
  EXPECT_THAT(cluster.err, HasSubstr("cluster \"elsewhere\" is not served"));

  // The daemon rejects an unknown status and a bad selector.
  Result bad_phase = Run({"get", "--phase", "Bogus"});
  EXPECT_EQ(bad_phase.code, 2);
  EXPECT_THAT(bad_phase.err, StartsWith("error: statuses: unknown status \"Bogus\""));
  EXPECT_EQ(Run({"get", "-l", "a in (b"}).code, 2);
}

TEST_F(LiveTest, UncoveredKindExitsFour) {
  Result r = Run({"describe", "Unknown/x"});
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, StartsWith("error: ref: no definition covers kind \"Unknown\""));
  Result resource = Run({"describe", "unknowns/x", "-o", "yaml"});
  EXPECT_EQ(resource.code, 4);
  Json error = ParseYamlDocuments(resource.out).value().at(0);
  EXPECT_EQ(error["error"], "no_definition_for_type");
  EXPECT_EQ(error["type"], "unknowns");
}

TEST_F(LiveTest, JsonAndYamlAgree) {
  for (const auto& argv :
       std::vector<std::vector<std::string>>{{"get", "-A"},
                                             {"describe", "JobSet/demo"},
                                             {"gang", "train-worker-2", "-n", "ml-team"},
                                             {"definitions"},
                                             {"definitions", "kubeflow-org-pytorchjob-v1"}}) {
    std::vector<std::string> json = argv, yaml = argv;
    json.insert(json.end(), {"-o", "json"});
    yaml.insert(yaml.end(), {"-o", "yaml"});
    Result j = Run(json), y = Run(yaml);
    ASSERT_EQ(j.code, 0) << j.err;
    ASSERT_EQ(y.code, 0) << y.err;
    EXPECT_EQ(ParseYamlDocuments(y.out).value().at(0), Json::parse(j.out))
        << absl::StrJoin(argv, " ");
  }
}

// definitions and validate print the same through the daemon as offline
// with the same definitions (but for -o json|yaml of definitions: offline
// prints the Karta objects, the daemon its view of them).
TEST_F(LiveTest, DaemonAndOfflineAgree) {
  std::string definitions = TestdataDir() + "/definitions";
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"definitions"},
           {"definitions", "--group", "example.com"},
           {"definitions", "--group", "kubeflow.org", "--kind", "PyTorchJob", "--version", "v1"},
           {"definitions", "example-com-trainer-v1"},
           {"definitions", "jobset-x-k8s-io-jobset-v1alpha2", "--component-limit", "0"}}) {
    Result daemon = Run(argv);
    std::vector<std::string> offline_argv = argv;
    offline_argv.insert(offline_argv.end(), {"--definitions", definitions});
    Result offline = RunCli(offline_argv);
    EXPECT_EQ(daemon.code, 0) << daemon.err;
    EXPECT_EQ(offline.code, 0) << offline.err;
    EXPECT_EQ(daemon.out, offline.out) << absl::StrJoin(argv, " ");
    EXPECT_EQ(daemon.err, offline.err) << absl::StrJoin(argv, " ");
  }
  std::string two_documents = absl::StrCat(
      ReadYamlFile(TestdataDir() + "/definitions/trainer.yaml").value().at(0).dump(), "\n---\n",
      ReadYamlFile(TestdataDir() + "/definitions/broken.yaml").value().at(0).dump());
  for (const char* file : {"trainer.yaml", "broken.yaml"}) {
    std::string path = TestdataDir() + "/definitions/" + file;
    Result daemon = Run({"validate", path});
    Result offline = RunCli({"validate", path, "--offline"});
    EXPECT_EQ(daemon.code, offline.code) << file;
    EXPECT_EQ(daemon.out, offline.out) << file;
    EXPECT_EQ(daemon.err, offline.err) << file;
  }
  Result daemon = Run({"validate", "-"}, {}, two_documents);
  Result offline = RunCli({"validate", "-", "--offline"}, {}, two_documents);
  EXPECT_EQ(daemon.code, 1);
  EXPECT_EQ(offline.code, 1);
  EXPECT_THAT(daemon.out,
              StartsWith("OK: stdin#1 is a valid Karta definition (GVK: example.com/v1, "
                         "Kind=Trainer)\nINVALID: stdin#2\n"));
  EXPECT_EQ(daemon.out, offline.out);
  EXPECT_EQ(daemon.err, offline.err);
  // Unparseable or unreadable: 2, before the daemon is asked.
  EXPECT_EQ(Run({"validate", "-"}, {}, "a: [").code, 2);
  EXPECT_EQ(Run({"validate", "/nonexistent.yaml"}).code, 2);
}

// A definition printed by NAME --offline (the Karta itself) round-trips
// into validate.
TEST_F(LiveTest, DefinitionRoundTripsIntoValidate) {
  Result yaml = RunCli({"definitions", "kubeflow-org-pytorchjob-v1", "--offline", "-o", "yaml"});
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  Result valid = Run({"validate", "-"}, {}, yaml.out);
  EXPECT_EQ(valid.code, 0) << valid.err;
  EXPECT_EQ(valid.out,
            "OK: stdin is a valid Karta definition (GVK: kubeflow.org/v1, Kind=PyTorchJob)\n");
}

// ---- Settings: flag > environment > config file > default ------------------------

class SettingsTest : public SnapshotDaemonTest {
 protected:
  // A config file in a temporary XDG_CONFIG_HOME.
  std::map<std::string, std::string> WithConfig(const std::string& text) {
    std::string home = absl::StrCat(::testing::TempDir(), "/wmctl-xdg-", getpid());
    std::filesystem::create_directories(home + "/wmctl");
    std::ofstream(home + "/wmctl/config.yaml") << text;
    return {{"XDG_CONFIG_HOME", home}};
  }
  void TearDown() override {
    std::filesystem::remove_all(absl::StrCat(::testing::TempDir(), "/wmctl-xdg-", getpid()));
  }
};

TEST_F(SettingsTest, AddressFromEnvironmentAndConfigFile) {
  Result env = RunCli({"get", "-o", "json"}, {{"WM_ADDRESS", address()}});
  EXPECT_EQ(env.code, 0) << env.err;
  EXPECT_EQ(Json::parse(env.out)["count"], 1);

  auto config = WithConfig(absl::StrCat("address: ", address(), "\noutput: json\n"));
  Result file = RunCli({"get"}, config);
  EXPECT_EQ(file.code, 0) << file.err;
  EXPECT_EQ(Json::parse(file.out)["count"], 1);
  // The flag wins over the environment, which wins over the file.
  config["WM_ADDRESS"] = "127.0.0.1:1";
  Result over_file = RunCli({"get"}, config);
  EXPECT_EQ(over_file.code, 1);
  EXPECT_THAT(over_file.err, StartsWith("error: workloadmapd at 127.0.0.1:1 is unavailable"));
  Result over_env = RunCli({"get", "--address", address()}, config);
  EXPECT_EQ(over_env.code, 0) << over_env.err;
}

TEST_F(SettingsTest, NamespaceAndOutput) {
  auto config = WithConfig("namespace: ml-team\noutput: wide\n");
  Result file = Run({"get"}, config);
  ASSERT_EQ(file.code, 0) << file.err;
  EXPECT_THAT(file.out, StartsWith("NAME     TYPE         STATUS"));
  EXPECT_THAT(file.out, HasSubstr("   DEFINITION\n"));  // wide
  EXPECT_THAT(file.out, HasSubstr("\ntrain    "));
  // A format the command does not take falls back to table when it comes
  // from the file or the environment (it is a usage error as -o).
  Result describe = Run({"describe", "PyTorchJob/train"}, config);
  EXPECT_EQ(describe.code, 0) << describe.err;
  EXPECT_THAT(describe.out, StartsWith("PyTorchJob/train   namespace: ml-team"));
  config["WMCTL_NAMESPACE"] = "default";
  config["WMCTL_OUTPUT"] = "yaml";
  Result env = Run({"get"}, config);
  ASSERT_EQ(env.code, 0) << env.err;
  EXPECT_EQ(ParseYamlDocuments(env.out).value().at(0)["items"][0]["name"], "demo");
  Result flags = Run({"get", "-n", "ml-team", "-o", "json"}, config);
  ASSERT_EQ(flags.code, 0) << flags.err;
  EXPECT_EQ(Json::parse(flags.out)["count"], 3);
}

TEST_F(SettingsTest, ExplicitConfigFile) {
  std::string path = absl::StrCat(::testing::TempDir(), "/wmctl-config-", getpid(), ".yaml");
  std::ofstream(path) << "namespace: ml-team\n";
  Result flag = Run({"get", "--config", path, "-o", "json"});
  EXPECT_EQ(flag.code, 0) << flag.err;
  EXPECT_EQ(Json::parse(flag.out)["count"], 3);
  Result env = Run({"get", "-o", "json"}, {{"WMCTL_CONFIG", path}});
  EXPECT_EQ(Json::parse(env.out)["count"], 3);
  // --config= reads no file, not even $WMCTL_CONFIG's.
  Result none = Run({"get", "--config=", "-o", "json"}, {{"WMCTL_CONFIG", path}});
  EXPECT_EQ(Json::parse(none.out)["count"], 1);
  std::filesystem::remove(path);
  Result missing = Run({"get"}, {{"WMCTL_CONFIG", path}});
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, StartsWith("error: config file " + path + ": "));
}

// ---- Completion candidates (`wmctl __complete`) -----------------------------------

std::vector<std::string> Candidates(const Result& r) {
  EXPECT_EQ(r.err, "");
  return absl::StrSplit(r.out, '\n', absl::SkipEmpty());
}

TEST_F(LiveTest, CompletesFromTheDaemon) {
  std::string a = "--address=" + address();
  auto complete = [&](std::vector<std::string> words) {
    words.insert(words.begin(), {"__complete", a});
    Result r = RunCli(words);
    EXPECT_EQ(r.code, 0) << absl::StrJoin(words, " ");
    return Candidates(r);
  };
  // TYPE from the definitions (the catalog's and the file's), NAME from
  // the workloads of the namespace.
  EXPECT_THAT(complete({"get", "Py"}), ElementsAre("PyTorchJob"));
  EXPECT_THAT(complete({"describe", "Tr"}), ElementsAre("TrainJob", "Trainer"));
  EXPECT_THAT(complete({"get", "JobSet/"}), ElementsAre("JobSet/demo"));
  EXPECT_THAT(complete({"describe", "JobSet/d"}), ElementsAre("JobSet/demo"));
  EXPECT_THAT(complete({"describe", "PyTorchJob/"}), IsEmpty());
  EXPECT_THAT(complete({"describe", "-n", "ml-team", "PyTorchJob/"}),
              ElementsAre("PyTorchJob/train"));
  EXPECT_THAT(complete({"describe", "-n", "ml-team", "trainers", ""}), ElementsAre("tune"));
  EXPECT_THAT(complete({"get", "-A", "pytorchjobs/"}), ElementsAre("pytorchjobs/train"));
  EXPECT_THAT(complete({"get", "-n", ""}), ElementsAre("default", "ml-team"));
  EXPECT_THAT(complete({"get", "--namespace=m"}), ElementsAre("--namespace=ml-team"));
  EXPECT_THAT(complete({"gang", "--cluster", ""}), ElementsAre("snapshot"));
  EXPECT_THAT(complete({"definitions", "example-"}),
              ElementsAre("example-com-sweep-v1", "example-com-trainer-v1"));
  EXPECT_THAT(complete({"definitions", "--offline", "example-"}), IsEmpty());
  EXPECT_THAT(complete({"definitions", "app"}), ::testing::Contains("apply"));
  EXPECT_THAT(complete({"definitions", "--definitions", TestdataDir() + "/definitions", "ex"}),
              ElementsAre("example-com-sweep-v1", "example-com-trainer-v1"));
  // Static ones.
  EXPECT_THAT(complete({""}), ElementsAre("get", "describe", "gang", "definitions", "validate",
                                          "eval", "completion", "version", "help"));
  EXPECT_THAT(complete({"eval", "--"}),
              ElementsAre("--config", "--filename", "--raw-output", "--engine", "--help"));
  EXPECT_THAT(complete({"eval", "--engine", ""}), ElementsAre("native", "libjq"));
  EXPECT_THAT(complete({"eval", "--engine=n"}), ElementsAre("--engine=native"));
  EXPECT_THAT(complete({"eval", ".a", ""}), IsEmpty());
  EXPECT_THAT(complete({"de"}), ElementsAre("describe", "definitions"));
  EXPECT_THAT(complete({"describe", "-o", ""}), ElementsAre("table", "json", "yaml"));
  EXPECT_THAT(complete({"get", "-o", "w"}), ElementsAre("wide"));
  EXPECT_THAT(complete({"get", "--phase", "Running,F"}), ElementsAre("Running,Failed"));
  EXPECT_THAT(complete({"gang", "--"}),
              ElementsAre("--config", "--address", "--tls", "--tls-ca", "--tls-cert", "--tls-key",
                          "--tls-server-name", "--token-file", "--kubeconfig", "--context", "--as",
                          "--as-group", "--request-timeout", "--cluster", "--namespace", "--output",
                          "--definitions", "--no-catalog", "--help"));
  EXPECT_THAT(complete({"get", "--all-"}), ElementsAre("--all-namespaces", "--all-types"));
  EXPECT_THAT(complete({"completion", ""}), ElementsAre("bash", "fish", "zsh"));
  EXPECT_THAT(complete({"gang", ""}), IsEmpty());
  // File names are the shell's to complete.
  for (const auto& words :
       std::vector<std::vector<std::string>>{{"__complete", "validate", ""},
                                             {"__complete", "describe", "-f", "x"},
                                             {"__complete", "eval", ".", "-f", ""},
                                             {"__complete", "get", "--config", ""},
                                             {"__complete", "definitions", "--definitions=./"},
                                             {"__complete", "get", "--tls-ca", "/etc/"}}) {
    EXPECT_EQ(RunCli(words).code, kCompleteFilesExit) << absl::StrJoin(words, " ");
  }
}

TEST(CompletionTest, UnreachableDaemonGivesNothing) {
  std::string address = absl::StrCat("127.0.0.1:", testing::FreePort());
  for (const auto& words : std::vector<std::vector<std::string>>{
           {"__complete", "--address", address, "get", ""},
           {"__complete", "get", "JobSet/"},
           {"__complete", "get", "-n", ""},
           {"__complete", "--address", "unix:/nonexistent/wm.sock", "definitions", "ex"},
           {"__complete", "--address", "not an address", "get", ""}}) {
    Result r = RunCli(words, {{"WM_ADDRESS", address}});
    EXPECT_EQ(r.code, 0) << absl::StrJoin(words, " ");
    EXPECT_EQ(r.out, "") << absl::StrJoin(words, " ");
    EXPECT_EQ(r.err, "") << absl::StrJoin(words, " ");
  }
}

// ---- Errors without a daemon ------------------------------------------------------

TEST(WmctlLiveTest, UnreachableDaemonExitsOne) {
  std::string address = absl::StrCat("127.0.0.1:", testing::FreePort());
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"get", "--address", address},
           {"describe", "JobSet/demo", "--address", address},
           {"gang", "p", "--address=" + address},
           {"definitions", "--address", address},
           {"validate", TestdataDir() + "/definitions/trainer.yaml", "--address", address}}) {
    Result r = RunCli(argv);
    EXPECT_EQ(r.code, 1) << argv[0];
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith("error: workloadmapd at " + address + " is unavailable: "));
  }
  Result unix_socket = RunCli({"get", "--address", "unix:/nonexistent/wm.sock"});
  EXPECT_EQ(unix_socket.code, 1);
  EXPECT_THAT(unix_socket.err, HasSubstr("workloadmapd at unix:/nonexistent/wm.sock"));
}

TEST(WmctlLiveTest, UsageErrors) {
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"get", "-n", "a", "-A"},
           {"get", "JobSet", "--all-types"},
           {"get", "JobSet/demo", "-l", "a=b"},
           {"get", "a", "b", "c"},
           {"get", "--pod-limit", "1"},
           {"get", "--address", "nowhere"},
           {"get", "-o", "xml"},
           {"get", "--tls-cert", "c.pem"},
           {"get", "--tls", "--address", "unix:/x.sock"},
           {"describe", "JobSet"},
           {"describe", "JobSet/"},
           {"describe", "JobSet/demo", "-A"},
           {"describe", "JobSet/demo", "--definitions", "x", "--address", "127.0.0.1:1"},
           {"get", "--no-catalog", "--address", "127.0.0.1:1"},
           {"get", "--cluster", "c"},
           {"gang", "p", "--tls"},
           {"get", "--address", "127.0.0.1:1", "--context", "c"},
           {"get", "--request-timeout", "soon"},
           {"get", "--kubeconfig", "/nonexistent/kubeconfig"},
           {"describe", "JobSet/demo", "-o", "wide"},
           {"describe", "-f", "x", "-n", "default"},
           {"describe", "-f", "x", "--address", "127.0.0.1:1"},
           {"validate", "x", "-o", "json"},
           {"validate", "x", "--offline", "--address", "127.0.0.1:1"},
           {"definitions", "-o", "wide"},
           {"definitions", "--offline", "--address", "127.0.0.1:1"},
           {"definitions", "--cluster", "c"},
           {"definitions", "--kind", "JobSet"},
           {"definitions", "--group", "g", "--version", "v1"},
           {"definitions", "a", "b"},
           {"gang"},
           {"gang", "a", "b"},
           {"gang", "p", "-l", "a=b"},
           {"completion"},
           {"completion", "tcsh"},
           {"frobnicate"}}) {
    Result r = RunCli(argv);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(argv, " ") << "\n" << r.err;
    EXPECT_THAT(r.err, StartsWith("error: ")) << absl::StrJoin(argv, " ");
  }
  // A bad WMCTL_OUTPUT or WM_ADDRESS names the variable.
  Result output = RunCli({"get"}, {{"WMCTL_OUTPUT", "xml"}});
  EXPECT_EQ(output.code, 2);
  EXPECT_THAT(output.err, HasSubstr("WMCTL_OUTPUT"));
  Result address = RunCli({"get"}, {{"WM_ADDRESS", "nowhere"}});
  EXPECT_EQ(address.code, 2);
  EXPECT_THAT(address.err, HasSubstr("in WM_ADDRESS"));
}

}  // namespace
}  // namespace wm::wmctl
