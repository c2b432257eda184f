#include "client/wmctl/config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::wmctl {
namespace {

using ::testing::HasSubstr;

Getenv EnvOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(ConfigTest, Location) {
  auto at = [](std::optional<std::string> flag, std::map<std::string, std::string> env) {
    ConfigLocation l = LocateConfig(flag, EnvOf(std::move(env)));
    return absl::StrCat(l.path, l.required ? " (required)" : "");
  };
  std::map<std::string, std::string> all = {
      {"WMCTL_CONFIG", "/env.yaml"}, {"XDG_CONFIG_HOME", "/xdg"}, {"HOME", "/home/u"}};
  EXPECT_EQ(at("/flag.yaml", all), "/flag.yaml (required)");
  EXPECT_EQ(at("", all), "");  // --config= reads none
  EXPECT_EQ(at(std::nullopt, all), "/env.yaml (required)");
  EXPECT_EQ(at(std::nullopt, {{"WMCTL_CONFIG", ""}, {"XDG_CONFIG_HOME", "/xdg"}}),
            "/xdg/wmctl/config.yaml");
  EXPECT_EQ(at(std::nullopt, {{"HOME", "/home/u"}}), "/home/u/.config/wmctl/config.yaml");
  EXPECT_EQ(at(std::nullopt, {}), "");
}

class ConfigFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/config.yaml") << text;
    return dir_ + "/config.yaml";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_ = absl::StrCat(::testing::TempDir(), "/wmctl-config-test-", getpid());
};

TEST_F(ConfigFileTest, EveryKey) {
  auto settings = ReadConfigFile(Write(R"(
address: wm.example.com:443
cluster: prod-eu
namespace: ml-team
output: wide
tls:
  ca: pki/ca.crt
  cert: /abs/client.crt
  key: client.key
  server-name: workloadmapd.example.com
)"));
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_EQ(settings->address, "wm.example.com:443");
  EXPECT_EQ(settings->cluster, "prod-eu");
  EXPECT_EQ(settings->namespace_, "ml-team");
  EXPECT_EQ(settings->output, "wide");
  EXPECT_EQ(settings->tls, std::nullopt);  // implied by the other keys
  // Relative paths are from the file's directory.
  EXPECT_EQ(settings->tls_ca, dir_ + "/pki/ca.crt");
  EXPECT_EQ(settings->tls_cert, "/abs/client.crt");
  EXPECT_EQ(settings->tls_key, dir_ + "/client.key");
  EXPECT_EQ(settings->tls_server_name, "workloadmapd.example.com");
}

TEST_F(ConfigFileTest, EmptyAndNullValues) {
  auto empty = ReadConfigFile(Write(""));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->address, std::nullopt);
  auto null = ReadConfigFile(Write("address:\ntls:\n"));
  ASSERT_TRUE(null.ok()) << null.status();
  EXPECT_EQ(null->address, std::nullopt);
  auto disabled = ReadConfigFile(Write("tls: {enabled: false, ca: ca.crt}\n"));
  ASSERT_TRUE(disabled.ok()) << disabled.status();
  EXPECT_EQ(disabled->tls, false);
}

TEST_F(ConfigFileTest, ErrorsNameTheKey) {
  struct Case {
    std::string text, message;
  };
  for (const Case& c :
       std::vector<Case>{{"adress: x:1\n", "unknown key \"adress\""},
                         {"output: xml\n", "key \"output\" has an unknown output format \"xml\""},
                         {"namespace: [a]\n", "key \"namespace\" must be a non-empty string"},
                         {"cluster: ''\n", "key \"cluster\" must be a non-empty string"},
                         {"tls: true\n", "key \"tls\" must be a mapping"},
                         {"tls: {enabled: maybe}\n", "key \"tls.enabled\" must be true or false"},
                         {"tls: {client-ca: x}\n", "unknown key \"tls.client-ca\""},
                         {"- a\n", "must be one YAML mapping"},
                         {"a: [\n", "config file"}}) {
    auto settings = ReadConfigFile(Write(c.text));
    ASSERT_FALSE(settings.ok()) << c.text;
    EXPECT_TRUE(absl::IsInvalidArgument(settings.status())) << c.text;
    EXPECT_THAT(settings.status().message(), HasSubstr(c.message)) << c.text;
    EXPECT_THAT(settings.status().message(), HasSubstr(dir_ + "/config.yaml")) << c.text;
  }
  EXPECT_TRUE(absl::IsNotFound(ReadConfigFile(dir_ + "/nonexistent.yaml").status()));
}

}  // namespace
}  // namespace wm::wmctl
