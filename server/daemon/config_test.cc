#include "server/daemon/config.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/expressions/jq_engine.h"

namespace wm::daemon {
namespace {

using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Env = std::map<std::string, std::string>;

// Parses `args` (without the program name) against a fake environment, so
// the tests never depend on the real one.
absl::StatusOr<ParseResult> Parse(std::vector<std::string> args, const Env& env = {}) {
  args.insert(args.begin(), "workloadmapd");
  return ParseConfig(args, [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

Config MustParse(std::vector<std::string> args, const Env& env = {}) {
  absl::StatusOr<ParseResult> result = Parse(std::move(args), env);
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result.ok() && result->help);
  return result.ok() ? result->config : Config{};
}

// The error message of a parse that must fail with InvalidArgument.
std::string ParseError(std::vector<std::string> args, const Env& env = {}) {
  absl::StatusOr<ParseResult> result = Parse(std::move(args), env);
  if (result.ok()) return "<parsed without error>";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << result.status();
  return std::string(result.status().message());
}

// Writes a config file unique to the running test (ctest runs tests in
// parallel) and returns its path.
std::string WriteConfig(const std::string& yaml, const std::string& suffix = "") {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path = absl::StrCat(::testing::TempDir(), "/wm_config_", test->test_suite_name(), "_",
                                  test->name(), suffix, ".yaml");
  std::ofstream(path, std::ios::trunc) << yaml;
  return path;
}

TEST(ConfigTest, Defaults) {
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{}, std::vector<std::string>{"workloadmapd"}}) {
    absl::StatusOr<ParseResult> result =
        ParseConfig(argv, [](const char*) -> const char* { return nullptr; });
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_FALSE(result->help);
    const Config& c = result->config;
    EXPECT_THAT(c.listen, ElementsAre("127.0.0.1:50051"));
    EXPECT_EQ(c.metrics_address, "127.0.0.1:9090");
    EXPECT_EQ(c.kubeconfig, "");
    EXPECT_TRUE(c.contexts.empty());
    EXPECT_FALSE(c.in_cluster);
    EXPECT_TRUE(c.definitions.empty());
    EXPECT_TRUE(c.builtin_catalog);
    EXPECT_TRUE(c.cluster_definitions);
    EXPECT_EQ(c.snapshot, "");
    EXPECT_EQ(c.namespace_, "");
    EXPECT_EQ(c.label_selector, "");
    EXPECT_EQ(c.tls.cert_file, "");
    EXPECT_EQ(c.tls.key_file, "");
    EXPECT_EQ(c.tls.client_ca_file, "");
    EXPECT_FALSE(c.tls.require_client_cert);
    EXPECT_EQ(c.keepalive_min_ping_interval, absl::Seconds(10));
    EXPECT_EQ(c.shutdown_grace, absl::Seconds(10));
    EXPECT_EQ(c.max_message_bytes, 16 << 20);
    EXPECT_EQ(c.grpc_memory_limit_bytes, int64_t{256} << 20);
    EXPECT_EQ(c.pod_tree_cache_bytes, int64_t{64} << 20);
    EXPECT_EQ(c.max_page_size, 500);
    EXPECT_EQ(c.watch_queue_size, 1000);
    EXPECT_EQ(c.watch_history, 10000);
    EXPECT_EQ(c.unix_socket_mode, 0660);
    EXPECT_EQ(c.jq_workers, 0);
    EXPECT_EQ(c.jq_memory_limit_bytes, expressions::kDefaultJqMemoryLimitBytes);
    EXPECT_EQ(c.jq_memory_limit_bytes, int64_t{512} << 20);
    EXPECT_EQ(c.max_inline_objects, 10000);
    EXPECT_EQ(c.default_deadline, absl::Seconds(30));
    EXPECT_EQ(c.log_format, "text");
    EXPECT_EQ(c.log_level, "info");
    EXPECT_EQ(c.config_file, "");
  }
}

TEST(ConfigTest, HelpWinsOverEverythingElse) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"--bogus", "--help"}, {"--listen", "nonsense", "-h"}}) {
    absl::StatusOr<ParseResult> result = Parse(args, {{"WM_MAX_PAGE_SIZE", "zero"}});
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_TRUE(result->help);
  }
}

TEST(ConfigTest, EveryFlagTakesSpaceAndEqualsForms) {
  const std::vector<std::pair<std::string, std::string>> flags = {
      {"listen", "0.0.0.0:1"},
      {"metrics-address", "[::]:2"},
      {"kubeconfig", "/k"},
      {"context", "prod"},
      {"definitions", "/defs"},
      {"namespace", "team-a"},
      {"selector", "app=web"},
      {"tls-cert", "/c"},
      {"tls-key", "/k2"},
      {"tls-client-ca", "/ca"},
      {"keepalive-min-ping-interval", "1m"},
      {"shutdown-grace", "0"},
      {"max-message-bytes", "1024"},
      {"grpc-memory-limit", "64Mi"},
      {"pod-tree-cache", "0"},
      {"max-page-size", "7"},
      {"watch-queue-size", "8"},
      {"unix-socket-mode", "0666"},
      {"jq-workers", "3"},
      {"jq-memory-limit", "1Gi"},
      {"max-inline-objects", "500"},
      {"default-deadline", "1500ms"},
      {"log-format", "json"},
      {"log-level", "debug"},
  };
  std::vector<std::string> spaced, equals;
  for (const auto& [flag, value] : flags) {
    spaced.push_back("--" + flag);
    spaced.push_back(value);
    equals.push_back(absl::StrCat("--", flag, "=", value));
  }
  for (const std::vector<std::string>& args : {spaced, equals}) {
    Config c = MustParse(args);
    EXPECT_THAT(c.listen, ElementsAre("0.0.0.0:1"));
    EXPECT_EQ(c.metrics_address, "[::]:2");
    EXPECT_EQ(c.kubeconfig, "/k");
    EXPECT_THAT(c.contexts, ElementsAre("prod"));
    EXPECT_THAT(c.definitions, ElementsAre("/defs"));
    EXPECT_EQ(c.namespace_, "team-a");
    EXPECT_EQ(c.label_selector, "app=web");
    EXPECT_EQ(c.tls.cert_file, "/c");
    EXPECT_EQ(c.tls.key_file, "/k2");
    EXPECT_EQ(c.tls.client_ca_file, "/ca");
    EXPECT_EQ(c.keepalive_min_ping_interval, absl::Minutes(1));
    EXPECT_EQ(c.shutdown_grace, absl::ZeroDuration());
    EXPECT_EQ(c.max_message_bytes, 1024);
    EXPECT_EQ(c.grpc_memory_limit_bytes, int64_t{64} << 20);
    EXPECT_EQ(c.pod_tree_cache_bytes, 0);
    EXPECT_EQ(c.max_page_size, 7);
    EXPECT_EQ(c.watch_queue_size, 8);
    EXPECT_EQ(c.unix_socket_mode, 0666);
    EXPECT_EQ(c.jq_workers, 3);
    EXPECT_EQ(c.jq_memory_limit_bytes, int64_t{1} << 30);
    EXPECT_EQ(c.max_inline_objects, 500);
    EXPECT_EQ(c.default_deadline, absl::Milliseconds(1500));
    EXPECT_EQ(c.log_format, "json");
    EXPECT_EQ(c.log_level, "debug");
  }
}

TEST(ConfigTest, EqualsFormKeepsEverythingAfterTheFirstEquals) {
  Config c = MustParse({"--selector=app=web,tier!=cache", "--snapshot=/s=1"});
  EXPECT_EQ(c.label_selector, "app=web,tier!=cache");
  EXPECT_EQ(c.snapshot, "/s=1");
  // The = form is how a value that looks like a flag, or is empty, is given.
  EXPECT_EQ(MustParse({"--selector=-x"}).label_selector, "-x");
  EXPECT_EQ(MustParse({"--metrics-address="}).metrics_address, "");
}

TEST(ConfigTest, BooleanFlags) {
  Config set = MustParse({"--in-cluster", "--no-builtin-catalog", "--no-cluster-definitions"});
  EXPECT_TRUE(set.in_cluster);
  EXPECT_FALSE(set.builtin_catalog);
  EXPECT_FALSE(set.cluster_definitions);

  Config explicit_true =
      MustParse({"--in-cluster=true", "--no-builtin-catalog=true", "--no-cluster-definitions=1"});
  EXPECT_TRUE(explicit_true.in_cluster);
  EXPECT_FALSE(explicit_true.builtin_catalog);
  EXPECT_FALSE(explicit_true.cluster_definitions);

  Config explicit_false = MustParse(
      {"--in-cluster=false", "--no-builtin-catalog=false", "--no-cluster-definitions=False"});
  EXPECT_FALSE(explicit_false.in_cluster);
  EXPECT_TRUE(explicit_false.builtin_catalog);
  EXPECT_TRUE(explicit_false.cluster_definitions);

  Config tls = MustParse(
      {"--tls-cert=/c", "--tls-key=/k", "--tls-client-ca=/ca", "--tls-require-client-cert"});
  EXPECT_TRUE(tls.tls.require_client_cert);
}

TEST(ConfigTest, LastScalarFlagWins) {
  EXPECT_EQ(MustParse({"--log-level=debug", "--log-level", "error"}).log_level, "error");
  EXPECT_FALSE(MustParse({"--in-cluster", "--in-cluster=false"}).in_cluster);
}

TEST(ConfigTest, RepeatedListFlagsAccumulate) {
  Config c = MustParse({"--listen", "unix:/run/wm.sock", "--context=a", "--listen=[::1]:0",
                        "--context", "b", "--definitions", "x", "--definitions=y"});
  EXPECT_THAT(c.listen, ElementsAre("unix:/run/wm.sock", "[::1]:0"));
  EXPECT_THAT(c.contexts, ElementsAre("a", "b"));
  EXPECT_THAT(c.definitions, ElementsAre("x", "y"));
}

TEST(ConfigTest, ScalarPrecedenceFlagOverEnvOverFileOverDefault) {
  std::string path = WriteConfig(
      "log-level: debug\n"
      "max-page-size: 11\n"
      "shutdown-grace: 11s\n"
      "in-cluster: true\n"
      "tls: {cert: /file.crt, key: /file.key}\n");
  Env file_only = {{"WM_CONFIG", path}};
  Env file_and_env = {{"WM_CONFIG", path},        {"WM_LOG_LEVEL", "warn"},
                      {"WM_MAX_PAGE_SIZE", "22"}, {"WM_SHUTDOWN_GRACE", "22s"},
                      {"WM_IN_CLUSTER", "false"}, {"WM_TLS_CERT", "/env.crt"}};
  std::vector<std::string> flags = {"--log-level=error", "--max-page-size=33",
                                    "--shutdown-grace=33s", "--in-cluster", "--tls-cert=/flag.crt"};

  Config c = MustParse({});
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.max_page_size, 500);
  EXPECT_EQ(c.shutdown_grace, absl::Seconds(10));
  EXPECT_FALSE(c.in_cluster);

  c = MustParse({}, file_only);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.max_page_size, 11);
  EXPECT_EQ(c.shutdown_grace, absl::Seconds(11));
  EXPECT_TRUE(c.in_cluster);
  EXPECT_EQ(c.tls.cert_file, "/file.crt");

  c = MustParse({}, file_and_env);
  EXPECT_EQ(c.log_level, "warn");
  EXPECT_EQ(c.max_page_size, 22);
  EXPECT_EQ(c.shutdown_grace, absl::Seconds(22));
  EXPECT_FALSE(c.in_cluster);
  EXPECT_EQ(c.tls.cert_file, "/env.crt");
  EXPECT_EQ(c.tls.key_file, "/file.key");  // untouched by the env: the file's

  c = MustParse(flags, file_and_env);
  EXPECT_EQ(c.log_level, "error");
  EXPECT_EQ(c.max_page_size, 33);
  EXPECT_EQ(c.shutdown_grace, absl::Seconds(33));
  EXPECT_TRUE(c.in_cluster);
  EXPECT_EQ(c.tls.cert_file, "/flag.crt");
  EXPECT_EQ(c.tls.key_file, "/file.key");

  // A flag also wins over the file alone, and an env var over the default.
  EXPECT_EQ(MustParse({"--max-page-size=44"}, file_only).max_page_size, 44);
  EXPECT_EQ(MustParse({}, {{"WM_MAX_PAGE_SIZE", "55"}}).max_page_size, 55);
}

TEST(ConfigTest, ListPrecedenceReplacesRatherThanAppends) {
  std::string path = WriteConfig(
      "listen: [\"file-a:1\", \"file-b:2\"]\n"
      "context: [file-ctx]\n"
      "definitions: [/file/defs]\n");
  Env file_only = {{"WM_CONFIG", path}};
  Env file_and_env = {{"WM_CONFIG", path},
                      {"WM_LISTEN", "env-a:3,env-b:4"},
                      {"WM_CONTEXTS", "env-ctx"},
                      {"WM_DEFINITIONS", "/env/defs"}};
  std::vector<std::string> flags = {"--listen",  "flag-a:5", "--listen",      "flag-b:6",
                                    "--context", "flag-ctx", "--definitions", "/flag/defs"};

  EXPECT_THAT(MustParse({}).listen, ElementsAre("127.0.0.1:50051"));

  Config c = MustParse({}, file_only);
  EXPECT_THAT(c.listen, ElementsAre("file-a:1", "file-b:2"));
  EXPECT_THAT(c.contexts, ElementsAre("file-ctx"));
  EXPECT_THAT(c.definitions, ElementsAre("/file/defs"));

  c = MustParse({}, file_and_env);
  EXPECT_THAT(c.listen, ElementsAre("env-a:3", "env-b:4"));
  EXPECT_THAT(c.contexts, ElementsAre("env-ctx"));
  EXPECT_THAT(c.definitions, ElementsAre("/env/defs"));

  c = MustParse(flags, file_and_env);
  EXPECT_THAT(c.listen, ElementsAre("flag-a:5", "flag-b:6"));
  EXPECT_THAT(c.contexts, ElementsAre("flag-ctx"));
  EXPECT_THAT(c.definitions, ElementsAre("/flag/defs"));

  EXPECT_THAT(MustParse({"--listen=flag:7"}, file_only).listen, ElementsAre("flag:7"));
  EXPECT_THAT(MustParse({}, {{"WM_LISTEN", "env:8"}}).listen, ElementsAre("env:8"));
}

TEST(ConfigTest, EnvListsAreTrimmedAndSkipEmptyItems) {
  Config c = MustParse({}, {{"WM_CONTEXTS", " a , b,,c, "}, {"WM_LISTEN", "unix:/s ,h:1"}});
  EXPECT_THAT(c.contexts, ElementsAre("a", "b", "c"));
  EXPECT_THAT(c.listen, ElementsAre("unix:/s", "h:1"));
}

TEST(ConfigTest, EmptyEnvVarsCountAsUnset) {
  Config c = MustParse({}, {{"WM_METRICS_ADDRESS", ""}, {"WM_LISTEN", ""}, {"WM_LOG_LEVEL", ""}});
  EXPECT_EQ(c.metrics_address, "127.0.0.1:9090");
  EXPECT_THAT(c.listen, ElementsAre("127.0.0.1:50051"));
  EXPECT_EQ(c.log_level, "info");
}

TEST(ConfigTest, EveryEnvVar) {
  Config c = MustParse({}, {{"WM_LISTEN", "unix:///run/wm.sock"},
                            {"WM_METRICS_ADDRESS", "off"},
                            {"WM_KUBECONFIG", "/kc"},
                            {"WM_CONTEXTS", "a,b"},
                            {"WM_DEFINITIONS", "/d1,/d2"},
                            {"WM_NO_BUILTIN_CATALOG", "true"},
                            {"WM_NO_CLUSTER_DEFINITIONS", "1"},
                            {"WM_NAMESPACE", "ns"},
                            {"WM_SELECTOR", "a=b"},
                            {"WM_TLS_CERT", "/c"},
                            {"WM_TLS_KEY", "/k"},
                            {"WM_TLS_CLIENT_CA", "/ca"},
                            {"WM_TLS_REQUIRE_CLIENT_CERT", "TRUE"},
                            {"WM_KEEPALIVE_MIN_PING_INTERVAL", "2s"},
                            {"WM_SHUTDOWN_GRACE", "3s"},
                            {"WM_MAX_MESSAGE_BYTES", "4"},
                            {"WM_MAX_PAGE_SIZE", "5"},
                            {"WM_WATCH_QUEUE_SIZE", "6"},
                            {"WM_DEFAULT_DEADLINE", "7s"},
                            {"WM_JQ_MEMORY_LIMIT", "300000000"},
                            {"WM_MAX_INLINE_OBJECTS", "8"},
                            {"WM_LOG_FORMAT", "json"},
                            {"WM_LOG_LEVEL", "warn"}});
  EXPECT_THAT(c.listen, ElementsAre("unix:///run/wm.sock"));
  EXPECT_EQ(c.metrics_address, "");
  EXPECT_EQ(c.kubeconfig, "/kc");
  EXPECT_THAT(c.contexts, ElementsAre("a", "b"));
  EXPECT_THAT(c.definitions, ElementsAre("/d1", "/d2"));
  EXPECT_FALSE(c.builtin_catalog);
  EXPECT_FALSE(c.cluster_definitions);
  EXPECT_EQ(c.namespace_, "ns");
  EXPECT_EQ(c.label_selector, "a=b");
  EXPECT_EQ(c.tls.cert_file, "/c");
  EXPECT_EQ(c.tls.key_file, "/k");
  EXPECT_EQ(c.tls.client_ca_file, "/ca");
  EXPECT_TRUE(c.tls.require_client_cert);
  EXPECT_EQ(c.keepalive_min_ping_interval, absl::Seconds(2));
  EXPECT_EQ(c.shutdown_grace, absl::Seconds(3));
  EXPECT_EQ(c.max_message_bytes, 4);
  EXPECT_EQ(c.max_page_size, 5);
  EXPECT_EQ(c.watch_queue_size, 6);
  EXPECT_EQ(c.default_deadline, absl::Seconds(7));
  EXPECT_EQ(c.jq_memory_limit_bytes, 300000000);
  EXPECT_EQ(c.max_inline_objects, 8);
  EXPECT_EQ(c.log_format, "json");
  EXPECT_EQ(c.log_level, "warn");
  // WM_IN_CLUSTER and WM_SNAPSHOT exclude the cluster settings above.
  EXPECT_TRUE(MustParse({}, {{"WM_IN_CLUSTER", "true"}}).in_cluster);
  EXPECT_EQ(MustParse({}, {{"WM_SNAPSHOT", "/snap"}}).snapshot, "/snap");
}

TEST(ConfigTest, DefaultGetenvReadsTheProcessEnvironment) {
  ASSERT_EQ(setenv("WM_LOG_FORMAT", "json", 1), 0);
  absl::StatusOr<ParseResult> result = ParseConfig({"workloadmapd"});
  unsetenv("WM_LOG_FORMAT");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->config.log_format, "json");
}

TEST(ConfigTest, MetricsOffAndEmptyDisable) {
  EXPECT_EQ(MustParse({"--metrics-address", "off"}).metrics_address, "");
  EXPECT_EQ(MustParse({"--metrics-address="}).metrics_address, "");
  EXPECT_EQ(MustParse({}, {{"WM_METRICS_ADDRESS", "off"}}).metrics_address, "");
  EXPECT_EQ(MustParse({"--metrics-address=0.0.0.0:9100"}).metrics_address, "0.0.0.0:9100");
}

TEST(ConfigTest, ValidListenAddresses) {
  for (const char* address : {"127.0.0.1:50051", "0.0.0.0:0", "localhost:65535",
                              "wm-0.svc.cluster.local:80", "[::]:1", "[::1]:50051", "[fe80::1:2]:3",
                              "unix:relative.sock", "unix:/run/wm.sock", "unix:///run/wm.sock"}) {
    EXPECT_THAT(MustParse({"--listen", address}).listen, ElementsAre(address));
  }
}

TEST(ConfigTest, InvalidListenAddresses) {
  struct Case {
    std::string address, message;
  };
  const std::string hint = " (expected HOST:PORT or unix:PATH)";
  for (const Case& test : std::vector<Case>{
           {"unix:", "unix: must be followed by a socket path"},
           {"unix://", "unix:// must be followed by an absolute path, as in unix:///run/wm.sock"},
           {"unix://host/x",
            "unix:// must be followed by an absolute path, as in "
            "unix:///run/wm.sock"},
           {"localhost", "must be HOST:PORT" + hint},
           {"localhost:", "port must be a number from 0 to 65535" + hint},
           {"localhost:65536", "port must be a number from 0 to 65535" + hint},
           {"localhost:-1", "port must be a number from 0 to 65535" + hint},
           {"localhost:http", "port must be a number from 0 to 65535" + hint},
           {":50051", "missing host (0.0.0.0 or [::] means every interface)" + hint},
           {"::1:50051", "an IPv6 host must be bracketed, as in [::1]:PORT" + hint},
           {"[::g]:1", "host in brackets must be an IPv6 address" + hint},
           {"[]:1", "host in brackets must be an IPv6 address" + hint},
           {"[::1:1", "host in brackets must be an IPv6 address" + hint},
           {"256.0.0.1:1", "host is not a valid IPv4 address" + hint},
           {"1.2.3:1", "host is not a valid IPv4 address" + hint},
           {"bad_host:1", "host must be a host name, IPv4 or [IPv6] address" + hint},
           {"-bad:1", "host must be a host name, IPv4 or [IPv6] address" + hint},
           {"a..b:1", "host must be a host name, IPv4 or [IPv6] address" + hint},
       }) {
    EXPECT_EQ(ParseError({"--listen=" + test.address}),
              absl::StrCat("invalid value \"", test.address, "\" for --listen: ", test.message));
  }
}

TEST(ConfigTest, FlagSyntaxErrors) {
  EXPECT_EQ(ParseError({"--bogus"}), "unknown flag --bogus (see --help)");
  EXPECT_EQ(ParseError({"--bogus=1"}), "unknown flag --bogus (see --help)");
  EXPECT_EQ(ParseError({"--no-in-cluster"}), "unknown flag --no-in-cluster (see --help)");
  EXPECT_EQ(ParseError({"-listen", "x:1"}), "unknown flag -listen (flags start with --)");
  EXPECT_EQ(ParseError({"serve"}), "unexpected argument \"serve\": workloadmapd takes only flags");
  EXPECT_EQ(ParseError({"--"}), "unexpected argument \"--\": workloadmapd takes only flags");
  EXPECT_EQ(ParseError({"--in-cluster", "false"}),
            "unexpected argument \"false\": boolean flags take a value as --in-cluster=false");
  EXPECT_EQ(ParseError({"--kubeconfig"}), "flag --kubeconfig needs a value");
  EXPECT_EQ(ParseError({"--kubeconfig", "--in-cluster"}),
            "flag --kubeconfig needs a value (use --kubeconfig=VALUE for a value starting with "
            "'-')");
  EXPECT_EQ(ParseError({"--in-cluster=yes"}),
            "invalid value \"yes\" for --in-cluster: must be true or false");
  EXPECT_EQ(ParseError({"--no-builtin-catalog="}),
            "invalid value \"\" for --no-builtin-catalog: must be true or false");
}

TEST(ConfigTest, BadValuesNameTheFlagAndValue) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string positive = "must be a positive integer (at most 2147483647)";
  const std::string duration = "must be a duration such as 500ms, 10s or 1m";
  for (const Case& test : std::vector<Case>{
           {{"--max-message-bytes", "0"},
            "invalid value \"0\" for --max-message-bytes: " + positive},
           {{"--max-page-size=-5"}, "invalid value \"-5\" for --max-page-size: " + positive},
           {{"--watch-queue-size=lots"},
            "invalid value \"lots\" for --watch-queue-size: " + positive},
           {{"--jq-memory-limit=100Mi"},
            "invalid value \"100Mi\" for --jq-memory-limit: must be at least 128Mi"},
           {{"--grpc-memory-limit=8Mi"},
            "invalid value \"8Mi\" for --grpc-memory-limit: must be at least 16Mi"},
           {{"--pod-tree-cache=lots"},
            "invalid value \"lots\" for --pod-tree-cache: must be a number of bytes, as in 512Mi, "
            "1Gi or 536870912"},
           {{"--jq-memory-limit=lots"},
            "invalid value \"lots\" for --jq-memory-limit: must be a number of bytes, as in "
            "512Mi, 1Gi or 536870912"},
           {{"--jq-memory-limit=-1Gi"},
            "invalid value \"-1Gi\" for --jq-memory-limit: must be a number of bytes, as in "
            "512Mi, 1Gi or 536870912"},
           {{"--jq-memory-limit=1.5"},
            "invalid value \"1.5\" for --jq-memory-limit: must be a number of bytes, as in "
            "512Mi, 1Gi or 536870912"},
           {{"--max-inline-objects=0"},
            "invalid value \"0\" for --max-inline-objects: " + positive},
           {{"--jq-workers=-1"},
            "invalid value \"-1\" for --jq-workers: must be a non-negative integer (at most "
            "2147483647)"},
           {{"--unix-socket-mode=0668"},
            "invalid value \"0668\" for --unix-socket-mode: must be octal permission bits such "
            "as 0660"},
           {{"--unix-socket-mode=17777"},
            "invalid value \"17777\" for --unix-socket-mode: must be octal permission bits "
            "such as 0660"},
           {{"--max-page-size=2147483648"},
            "invalid value \"2147483648\" for --max-page-size: " + positive},
           {{"--max-page-size=1.5"}, "invalid value \"1.5\" for --max-page-size: " + positive},
           {{"--keepalive-min-ping-interval=10"},
            "invalid value \"10\" for --keepalive-min-ping-interval: " + duration},
           {{"--keepalive-min-ping-interval=0"},
            "invalid value \"0\" for --keepalive-min-ping-interval: must be positive"},
           {{"--default-deadline=0s"},
            "invalid value \"0s\" for --default-deadline: must be positive"},
           {{"--default-deadline=inf"},
            "invalid value \"inf\" for --default-deadline: " + duration},
           {{"--shutdown-grace=-1s"},
            "invalid value \"-1s\" for --shutdown-grace: must not be negative"},
           {{"--shutdown-grace=soon"}, "invalid value \"soon\" for --shutdown-grace: " + duration},
           {{"--log-level=verbose"},
            "invalid value \"verbose\" for --log-level: must be one of debug, info, warn, error"},
           {{"--log-level=INFO"},
            "invalid value \"INFO\" for --log-level: must be one of debug, info, warn, error"},
           {{"--log-format=xml"},
            "invalid value \"xml\" for --log-format: must be one of text, json"},
           {{"--metrics-address=9090"},
            "invalid value \"9090\" for --metrics-address: must be HOST:PORT (or \"off\")"},
           {{"--metrics-address=unix:/m.sock"},
            "invalid value \"unix:/m.sock\" for --metrics-address: port must be a number from 0 "
            "to 65535 (or \"off\")"},
           {{"--namespace=Team_A"},
            "invalid value \"Team_A\" for --namespace: must be a namespace name (lowercase "
            "letters, digits and '-', at most 63)"},
           {{"--context="}, "invalid value \"\" for --context: must not be empty"},
           {{"--definitions="}, "invalid value \"\" for --definitions: must not be empty"},
           {{"--listen=a:1", "--listen=a:1"}, "invalid value \"a:1\" for --listen: given twice"},
           {{"--context=x", "--context=x"}, "invalid value \"x\" for --context: given twice"},
       }) {
    EXPECT_EQ(ParseError(test.args), test.message) << test.args.front();
  }
}

TEST(ConfigTest, BadEnvValuesNameTheVariable) {
  EXPECT_EQ(ParseError({}, {{"WM_MAX_PAGE_SIZE", "0"}}),
            "invalid value \"0\" for WM_MAX_PAGE_SIZE: must be a positive integer (at most "
            "2147483647)");
  EXPECT_EQ(ParseError({}, {{"WM_LISTEN", "a:1,nope"}}),
            "invalid value \"nope\" for WM_LISTEN: must be HOST:PORT (expected HOST:PORT or "
            "unix:PATH)");
  EXPECT_EQ(ParseError({}, {{"WM_IN_CLUSTER", "yes"}}),
            "invalid value \"yes\" for WM_IN_CLUSTER: must be true or false");
  EXPECT_EQ(ParseError({}, {{"WM_CONTEXTS", "a,a"}}),
            "invalid value \"a\" for WM_CONTEXTS: given twice");
  EXPECT_EQ(ParseError({}, {{"WM_LISTEN", ","}}), "at least one --listen address is needed");
  // A good flag does not excuse a bad env var: every source is checked.
  EXPECT_EQ(ParseError({"--log-level=info"}, {{"WM_LOG_LEVEL", "loud"}}),
            "invalid value \"loud\" for WM_LOG_LEVEL: must be one of debug, info, warn, error");
}

TEST(ConfigTest, TheWebhookNeedsItsAddressAndBothTlsFiles) {
  Config c = MustParse({"--webhook-address=0.0.0.0:9443", "--webhook-tls-cert=/w/tls.crt",
                        "--webhook-tls-key=/w/tls.key"});
  EXPECT_EQ(c.webhook_address, "0.0.0.0:9443");
  EXPECT_EQ(c.webhook_tls_cert, "/w/tls.crt");
  EXPECT_EQ(c.webhook_tls_key, "/w/tls.key");
  EXPECT_EQ(MustParse({}).webhook_address, "");
  EXPECT_THAT(ParseError({"--webhook-address=0.0.0.0:9443", "--webhook-tls-cert=/c"}),
              HasSubstr("--webhook-address needs --webhook-tls-cert and --webhook-tls-key"));
  EXPECT_EQ(ParseError({"--webhook-tls-key=/k"}),
            "--webhook-tls-cert and --webhook-tls-key need --webhook-address");
  EXPECT_THAT(ParseError({"--webhook-address=nowhere"}), HasSubstr("--webhook-address"));
}

TEST(ConfigTest, PublishingTheCatalogNeedsLeaderElectionAndTheCatalog) {
  EXPECT_FALSE(MustParse({}).publish_catalog);
  EXPECT_TRUE(MustParse({"--publish-catalog", "--leader-elect"}).publish_catalog);
  EXPECT_THAT(ParseError({"--publish-catalog"}),
              HasSubstr("--publish-catalog needs --leader-elect"));
  EXPECT_THAT(ParseError({"--publish-catalog", "--leader-elect", "--no-builtin-catalog"}),
              HasSubstr("not with --no-builtin-catalog"));
}

TEST(ConfigTest, PodGroupsNameSchedulersOncePerFlagAndNeedLeaderElection) {
  Config c =
      MustParse({"--leader-elect", "--kai-pod-groups=kai-scheduler", "--volcano-pod-groups=volcano",
                 "--volcano-pod-groups=volcano-2", "--kai-pod-groups-for-native-kinds"});
  EXPECT_EQ(c.kai_pod_groups, std::vector<std::string>{"kai-scheduler"});
  EXPECT_EQ(c.volcano_pod_groups, (std::vector<std::string>{"volcano", "volcano-2"}));
  EXPECT_TRUE(c.coscheduling_pod_groups.empty());
  EXPECT_TRUE(c.kai_pod_groups_for_native_kinds);
  EXPECT_EQ(MustParse({"--leader-elect"}, {{"WM_COSCHEDULING_POD_GROUPS", "a, b"}})
                .coscheduling_pod_groups,
            (std::vector<std::string>{"a", "b"}));
  EXPECT_THAT(ParseError({"--coscheduling-pod-groups=x"}),
              HasSubstr("--coscheduling-pod-groups needs --leader-elect"));
  EXPECT_THAT(ParseError({"--leader-elect", "--kai-pod-groups=s", "--volcano-pod-groups=s"}),
              HasSubstr("is named by both --kai-pod-groups and --volcano-pod-groups"));
  EXPECT_THAT(ParseError({"--leader-elect", "--kai-pod-groups-for-native-kinds"}),
              HasSubstr("needs --kai-pod-groups"));
}

TEST(ConfigTest, TheKartaOperatorIsOnUnlessTurnedOff) {
  EXPECT_TRUE(MustParse({}).karta_operator);
  EXPECT_FALSE(MustParse({"--no-karta-operator"}).karta_operator);
  EXPECT_FALSE(MustParse({}, {{"WM_NO_KARTA_OPERATOR", "true"}}).karta_operator);
}

TEST(ConfigTest, CombinationErrors) {
  EXPECT_EQ(ParseError({"--tls-cert=/c"}), "--tls-cert needs --tls-key");
  EXPECT_EQ(ParseError({"--tls-key=/k"}), "--tls-key needs --tls-cert");
  EXPECT_EQ(ParseError({"--tls-client-ca=/ca"}),
            "--tls-client-ca needs --tls-cert (mutual TLS is TLS)");
  EXPECT_EQ(ParseError({"--tls-cert=/c", "--tls-key=/k", "--tls-require-client-cert"}),
            "--tls-require-client-cert needs --tls-client-ca to verify the certificates");
  EXPECT_EQ(ParseError({"--snapshot=/s", "--context=prod"}),
            "--snapshot cannot be combined with --context");
  EXPECT_EQ(ParseError({"--snapshot=/s", "--kubeconfig=/kc"}),
            "--snapshot cannot be combined with --kubeconfig");
  EXPECT_EQ(ParseError({"--snapshot=/s", "--in-cluster"}),
            "--snapshot cannot be combined with --in-cluster");
  EXPECT_EQ(ParseError({"--snapshot=/s", "--in-cluster", "--kubeconfig=/kc", "--context=a"}),
            "--snapshot cannot be combined with --kubeconfig or --context or --in-cluster");
  EXPECT_EQ(ParseError({"--in-cluster", "--kubeconfig=/kc"}),
            "--in-cluster cannot be combined with --kubeconfig");
  EXPECT_EQ(ParseError({"--in-cluster", "--context=a"}),
            "--in-cluster cannot be combined with --context");
  // Combinations are checked on the merged result, whatever the sources.
  // Every jq worker gets at least 64 MiB of the jq memory limit.
  EXPECT_EQ(ParseError({"--jq-workers=9"}),
            "--jq-memory-limit 512Mi gives each of --jq-workers 9 56 MiB, less than the 64 MiB a "
            "jq worker needs");
  EXPECT_EQ(MustParse({"--jq-workers=8"}).jq_workers, 8);
  EXPECT_EQ(MustParse({"--jq-workers=9", "--jq-memory-limit=1Gi"}).jq_workers, 9);
  EXPECT_EQ(ParseError({"--snapshot=/s"}, {{"WM_KUBECONFIG", "/kc"}}),
            "--snapshot cannot be combined with --kubeconfig");
  // ...so a higher source can clear what a lower one set.
  EXPECT_EQ(MustParse({"--snapshot=/s", "--kubeconfig="}, {{"WM_KUBECONFIG", "/kc"}}).snapshot,
            "/s");
  EXPECT_EQ(
      MustParse({"--snapshot=/s", "--in-cluster=false"}, {{"WM_IN_CLUSTER", "true"}}).snapshot,
      "/s");
}

TEST(ConfigFileTest, EveryKey) {
  std::string path = WriteConfig(R"(# every setting
listen:
  - 0.0.0.0:50051
  - unix:///run/wm.sock
metrics-address: "off"
kubeconfig: /etc/kube/config
context: [a, b]
in-cluster: false
definitions: [/defs/one.yaml, /defs/more]
no-builtin-catalog: true
no-cluster-definitions: true
namespace: team-a
selector: app=web,tier!=cache
tls:
  cert: /tls/tls.crt
  key: /tls/tls.key
  client-ca: /tls/ca.crt
  require-client-cert: true
keepalive-min-ping-interval: 1m30s
shutdown-grace: 0
max-message-bytes: 1048576
max-page-size: 100
watch-queue-size: 64
default-deadline: 2.5s
jq-memory-limit: 256Mi
max-inline-objects: 2000
log-format: json
log-level: debug
)");
  Config c = MustParse({"--config", path});
  EXPECT_EQ(c.config_file, path);
  EXPECT_THAT(c.listen, ElementsAre("0.0.0.0:50051", "unix:///run/wm.sock"));
  EXPECT_EQ(c.metrics_address, "");
  EXPECT_EQ(c.kubeconfig, "/etc/kube/config");
  EXPECT_THAT(c.contexts, ElementsAre("a", "b"));
  EXPECT_FALSE(c.in_cluster);
  EXPECT_THAT(c.definitions, ElementsAre("/defs/one.yaml", "/defs/more"));
  EXPECT_FALSE(c.builtin_catalog);
  EXPECT_FALSE(c.cluster_definitions);
  EXPECT_EQ(c.namespace_, "team-a");
  EXPECT_EQ(c.label_selector, "app=web,tier!=cache");
  EXPECT_EQ(c.tls.cert_file, "/tls/tls.crt");
  EXPECT_EQ(c.tls.key_file, "/tls/tls.key");
  EXPECT_EQ(c.tls.client_ca_file, "/tls/ca.crt");
  EXPECT_TRUE(c.tls.require_client_cert);
  EXPECT_EQ(c.keepalive_min_ping_interval, absl::Seconds(90));
  EXPECT_EQ(c.shutdown_grace, absl::ZeroDuration());
  EXPECT_EQ(c.max_message_bytes, 1 << 20);
  EXPECT_EQ(c.max_page_size, 100);
  EXPECT_EQ(c.watch_queue_size, 64);
  EXPECT_EQ(c.default_deadline, absl::Milliseconds(2500));
  EXPECT_EQ(c.jq_memory_limit_bytes, int64_t{256} << 20);
  EXPECT_EQ(c.max_inline_objects, 2000);
  EXPECT_EQ(c.log_format, "json");
  EXPECT_EQ(c.log_level, "debug");
  // The file's other keys, in the other form and through WM_CONFIG.
  std::string other = WriteConfig("in-cluster: true\nlisten: \"[::]:1\"\n", "_other");
  c = MustParse({"--config=" + other});
  EXPECT_TRUE(c.in_cluster);
  EXPECT_THAT(c.listen, ElementsAre("[::]:1"));  // a single value for a list
  EXPECT_EQ(MustParse({}, {{"WM_CONFIG", other}}).config_file, other);
}

TEST(ConfigFileTest, RelativePathsAreRelativeToTheFile) {
  std::string path = WriteConfig(
      "kubeconfig: kube/config\n"
      "definitions: [defs, /abs/defs]\n"
      "tls: {cert: tls.crt, key: /abs/tls.key, client-ca: ca/ca.crt}\n");
  std::string dir = path.substr(0, path.rfind('/') + 1);
  Config c = MustParse({"--config", path});
  EXPECT_EQ(c.kubeconfig, dir + "kube/config");
  EXPECT_THAT(c.definitions, ElementsAre(dir + "defs", "/abs/defs"));
  EXPECT_EQ(c.tls.cert_file, dir + "tls.crt");
  EXPECT_EQ(c.tls.key_file, "/abs/tls.key");
  EXPECT_EQ(c.tls.client_ca_file, dir + "ca/ca.crt");
  // Flags and env vars stay relative to the working directory.
  EXPECT_EQ(MustParse({"--config", path, "--kubeconfig=kc"}).kubeconfig, "kc");
  std::string snapshot = WriteConfig("snapshot: manifests\n", "_snapshot");
  EXPECT_EQ(MustParse({"--config", snapshot}).snapshot, dir + "manifests");
}

TEST(ConfigFileTest, ConfigFlagWinsOverEnvAndEmptyFlagDisablesIt) {
  std::string from_env = WriteConfig("log-level: warn\n", "_env");
  std::string from_flag = WriteConfig("log-level: error\n", "_flag");
  Env env = {{"WM_CONFIG", from_env}};
  EXPECT_EQ(MustParse({}, env).log_level, "warn");
  Config c = MustParse({"--config", from_flag}, env);
  EXPECT_EQ(c.log_level, "error");
  EXPECT_EQ(c.config_file, from_flag);
  c = MustParse({"--config="}, env);
  EXPECT_EQ(c.log_level, "info");
  EXPECT_EQ(c.config_file, "");
}

TEST(ConfigFileTest, NullValuesAndEmptyFilesSetNothing) {
  std::string path = WriteConfig("log-level:\nlisten:\ntls:\n");
  Config c = MustParse({"--config", path});
  EXPECT_EQ(c.log_level, "info");
  EXPECT_THAT(c.listen, ElementsAre("127.0.0.1:50051"));
  std::string empty = WriteConfig("# nothing yet\n", "_empty");
  EXPECT_EQ(MustParse({"--config", empty}).max_page_size, 500);
}

TEST(ConfigFileTest, Errors) {
  struct Case {
    std::string yaml, message;  // message after "config file PATH"
  };
  for (const Case& test : std::vector<Case>{
           {"listen: [a:1]\nlog-levle: debug\n", ": unknown key \"log-levle\""},
           {"tls: {cert: /c, key: /k, ca: /ca}\n", ": unknown key \"tls.ca\""},
           {"tls-cert: /c\n", ": unknown key \"tls-cert\""},
           {"config: /other.yaml\n", ": unknown key \"config\""},
           {"help: true\n", ": unknown key \"help\""},
           {"tls: /c\n",
            ": key \"tls\" must be a mapping of cert, key, client-ca, require-client-cert"},
           {"- listen\n", ": must be a single YAML mapping of settings"},
           {"log-level: info\n---\nlog-level: debug\n",
            ": must be a single YAML mapping of settings"},
           {"listen: [a:1\n",
            ": YAML parse error at line 2, column 1: did not find expected ',' or ']' while "
            "parsing a flow sequence"},
       }) {
    std::string path = WriteConfig(test.yaml);
    EXPECT_EQ(ParseError({"--config", path}), absl::StrCat("config file ", path, test.message))
        << test.yaml;
  }
}

TEST(ConfigFileTest, BadValuesNameTheKey) {
  struct Case {
    std::string yaml, message;  // message with PATH for the file's path
  };
  for (const Case& test : std::vector<Case>{
           {"max-page-size: 0\n",
            "invalid value \"0\" for key \"max-page-size\" in config file PATH: must be a "
            "positive integer (at most 2147483647)"},
           {"max-page-size: 1.5\n",
            "invalid value \"1.5\" for key \"max-page-size\" in config file PATH: must be a "
            "positive integer (at most 2147483647)"},
           {"keepalive-min-ping-interval: 10\n",
            "invalid value \"10\" for key \"keepalive-min-ping-interval\" in config file PATH: "
            "must be a duration such as 500ms, 10s or 1m"},
           {"tls: {require-client-cert: maybe}\n",
            "invalid value \"maybe\" for key \"tls.require-client-cert\" in config file PATH: "
            "must be true or false"},
           {"listen: [a:1, nope]\n",
            "invalid value \"nope\" for key \"listen\" in config file PATH: must be HOST:PORT "
            "(expected HOST:PORT or unix:PATH)"},
           {"listen: [a:1, a:1]\n",
            "invalid value \"a:1\" for key \"listen\" in config file PATH: given twice"},
           {"listen: {a: 1}\n",
            "key \"listen\" in config file PATH: expected a value or a list of values, not "
            "object"},
           {"listen: [[a:1]]\n",
            "key \"listen\" in config file PATH: list items must be single values, not array"},
           {"log-level: [debug]\n",
            "key \"log-level\" in config file PATH: expected a value, not array"},
           {"listen: []\n", "at least one --listen address is needed"},
           {"tls: {cert: /c}\n", "--tls-cert needs --tls-key"},
       }) {
    std::string path = WriteConfig(test.yaml);
    std::string message = test.message;
    if (size_t at = message.find("PATH"); at != std::string::npos) message.replace(at, 4, path);
    EXPECT_EQ(ParseError({"--config", path}), message) << test.yaml;
  }
}

TEST(ConfigTest, AuthenticationModesAudiencesAndTtl) {
  absl::StatusOr<ParseResult> result =
      Parse({"--authentication=kubernetes", "--token-audiences=a", "--token-audiences=b",
             "--authentication-cache-ttl=30s", "--authorization-allowed-ttl=1m",
             "--authorization-denied-ttl=5s"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->config.authorization_allowed_ttl, absl::Minutes(1));
  EXPECT_EQ(result->config.authorization_denied_ttl, absl::Seconds(5));
  EXPECT_EQ(result->config.authentication, "kubernetes");
  EXPECT_THAT(result->config.token_audiences, ::testing::ElementsAre("a", "b"));
  EXPECT_EQ(result->config.authentication_cache_ttl, absl::Seconds(30));
  result = Parse({});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->config.authentication, "none");
  EXPECT_EQ(ParseError({"--authentication=basic"}),
            "invalid value \"basic\" for --authentication: neither none nor kubernetes");
  EXPECT_EQ(ParseError({"--authentication=kubernetes", "--snapshot=/s"}),
            "--authentication=kubernetes needs a cluster to review tokens; --snapshot has none");
  EXPECT_EQ(Parse({"--inline-permission=create  pods.example.com"})->config.inline_permission,
            "create pods.example.com");
  EXPECT_THAT(ParseError({"--inline-permission=create"}),
              HasSubstr("expected a verb and a resource"));
}

TEST(ConfigTest, UnixPeerIdentitiesNeedAuthenticationAndAUnixListener) {
  absl::StatusOr<ParseResult> result =
      Parse({"--authentication=kubernetes", "--listen=unix:/run/wm.sock",
             "--unix-peer-identity=uid:1000=system:serviceaccount:kai:kai-scheduler",
             "--unix-peer-identity=gid:2000=tools;ops"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->config.unix_peer_identities,
              ::testing::ElementsAre("uid:1000=system:serviceaccount:kai:kai-scheduler",
                                     "gid:2000=tools;ops"));
  EXPECT_THAT(ParseError({"--authentication=kubernetes", "--listen=unix:/run/wm.sock",
                          "--unix-peer-identity=1000=kai"}),
              HasSubstr("the key is neither uid:UID nor gid:GID"));
  EXPECT_THAT(ParseError({"--listen=unix:/run/wm.sock", "--unix-peer-identity=uid:1=kai"}),
              HasSubstr("--unix-peer-identity needs --authentication=kubernetes"));
  EXPECT_EQ(ParseError({"--authentication=kubernetes", "--unix-peer-identity=uid:1=kai"}),
            "--unix-peer-identity needs a --listen unix:PATH");
}

TEST(ConfigTest, WorkloadMetricsMaxSeries) {
  EXPECT_EQ(Parse({})->config.workload_metrics_max_series, 500000);
  EXPECT_EQ(Parse({"--workload-metrics-max-series=0"})->config.workload_metrics_max_series, 0);
  EXPECT_THAT(ParseError({"--workload-metrics-max-series=-1"}), HasSubstr("non-negative integer"));
  EXPECT_TRUE(Parse({})->config.web);
  EXPECT_FALSE(Parse({"--no-web"})->config.web);
  EXPECT_EQ(Parse({"--web-assets-dir=/tmp/page"})->config.web_assets_dir, "/tmp/page");
  EXPECT_FALSE(Parse({})->config.leader_elect);
  auto elect = Parse({"--leader-elect", "--leader-election-lease-duration=30s",
                      "--leader-election-namespace=wm", "--leader-election-identity=pod-a"});
  ASSERT_TRUE(elect.ok()) << elect.status();
  EXPECT_TRUE(elect->config.leader_elect);
  EXPECT_EQ(elect->config.leader_election_lease_duration, absl::Seconds(30));
  EXPECT_EQ(elect->config.leader_election_renew_deadline, absl::Seconds(10));
  EXPECT_EQ(elect->config.leader_election_namespace, "wm");
  EXPECT_EQ(elect->config.leader_election_identity, "pod-a");
  EXPECT_EQ(elect->config.leader_election_lease, "workloadmapd");
}

TEST(ConfigTest, CallerLimits) {
  absl::StatusOr<ParseResult> result =
      Parse({"--caller-rate=100", "--caller-max-watches=4",
             "--caller-limit-exempt=system:serviceaccount:kai:scheduler"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->config.caller_rate, 100);
  EXPECT_EQ(result->config.caller_burst, 0);
  EXPECT_EQ(result->config.caller_max_watches, 4);
  EXPECT_THAT(result->config.caller_limit_exempt,
              ::testing::ElementsAre("system:serviceaccount:kai:scheduler"));
  EXPECT_EQ(Parse({})->config.caller_rate, 0);
  EXPECT_THAT(ParseError({"--caller-rate=-1"}), HasSubstr("non-negative integer"));
}

TEST(ConfigFileTest, MissingFileIsNotFound) {
  std::string path = ::testing::TempDir() + "/wm_config_does_not_exist.yaml";
  absl::StatusOr<ParseResult> result = Parse({"--config", path});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(result.status().message(),
            absl::StrCat("config file ", path, ": No such file or directory"));
}

// Every setting the daemon has; the parser and Usage() must both know each.
const std::vector<std::string> kFlags = {
    "listen",
    "metrics-address",
    "workload-metrics-max-series",
    "no-web",
    "web-assets-dir",
    "leader-elect",
    "leader-election-namespace",
    "leader-election-lease",
    "leader-election-identity",
    "leader-election-lease-duration",
    "leader-election-renew-deadline",
    "leader-election-retry-period",
    "kubeconfig",
    "context",
    "in-cluster",
    "definitions",
    "no-builtin-catalog",
    "no-cluster-definitions",
    "snapshot",
    "namespace",
    "selector",
    "tls-cert",
    "tls-key",
    "tls-client-ca",
    "tls-require-client-cert",
    "authentication",
    "token-audiences",
    "unix-peer-identity",
    "authentication-cache-ttl",
    "authorization-allowed-ttl",
    "authorization-denied-ttl",
    "inline-permission",
    "keepalive-min-ping-interval",
    "shutdown-grace",
    "max-message-bytes",
    "grpc-memory-limit",
    "pod-tree-cache",
    "max-page-size",
    "watch-queue-size",
    "caller-rate",
    "caller-burst",
    "caller-max-watches",
    "caller-limit-exempt",
    "unix-socket-mode",
    "jq-workers",
    "jq-memory-limit",
    "max-inline-objects",
    "default-deadline",
    "log-format",
    "log-level",
    "config",
};

std::string EnvVarOf(const std::string& flag) {
  if (flag == "context") return "WM_CONTEXTS";
  std::string env = "WM_";
  for (char c : flag) env.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(c)));
  return env;
}

TEST(UsageTest, MentionsEveryFlagItsEnvVarAndEveryGroup) {
  const std::string usage = Usage();
  for (const std::string& flag : kFlags) {
    // At the start of a line, so "--tls-cert" is not found inside another.
    EXPECT_THAT(usage, AnyOf(HasSubstr("\n  --" + flag + "\n"), HasSubstr("\n  --" + flag + " ")))
        << flag;
    EXPECT_THAT(usage, HasSubstr("env " + EnvVarOf(flag) + ";")) << flag;
  }
  EXPECT_THAT(usage, HasSubstr("\n  --help, -h\n"));
  for (const char* group :
       {"General", "Serving", "Cluster", "Definitions", "TLS", "Access", "Limits", "Logging"}) {
    EXPECT_THAT(usage, HasSubstr(absl::StrCat("\n", group, ":\n"))) << group;
  }
  EXPECT_THAT(usage, HasSubstr("default 127.0.0.1:50051"));
  EXPECT_THAT(usage, HasSubstr("default 16777216"));
  EXPECT_THAT(usage, HasSubstr("default 512Mi"));
  EXPECT_THAT(usage, HasSubstr("default 10s"));
  EXPECT_THAT(usage, HasSubstr("file tls.require-client-cert"));
  for (absl::string_view line : absl::StrSplit(usage, '\n')) {
    EXPECT_LE(line.size(), 80u) << line;
  }
}

TEST(UsageTest, EveryFlagInTheListIsAccepted) {
  // Guards the list above: a flag Usage() mentions but the parser rejects
  // (or the other way round) fails one of these two tests.
  for (const std::string& flag : kFlags) {
    absl::StatusOr<ParseResult> result = Parse({"--" + flag + "=x"});
    if (!result.ok()) {
      EXPECT_THAT(result.status().message(), Not(HasSubstr("unknown flag"))) << flag;
    }
  }
}

}  // namespace
}  // namespace wm::daemon
