#include "server/observability/exposition_writer.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/observability/metrics.h"

namespace wm::observability {
namespace {

TEST(ExpositionWriterTest, WritesFamiliesWithEscapedHelpAndLabelValues) {
  std::string out;
  ExpositionWriter writer(&out);
  writer.StartFamily("wm_info", "Line one\\ and\ntwo.", "gauge");
  writer.Sample("wm_info", {{"name", "a\"b"}, {"path", "C:\\x\ny"}}, 1);
  writer.Sample("wm_info", {{"cluster", "c"}}, {{"phase", "Running"}}, 0.5);
  writer.Sample("wm_info", {}, 3);
  EXPECT_EQ(out,
            "# HELP wm_info Line one\\\\ and\\ntwo.\n"
            "# TYPE wm_info gauge\n"
            "wm_info{name=\"a\\\"b\",path=\"C:\\\\x\\ny\"} 1\n"
            "wm_info{cluster=\"c\",phase=\"Running\"} 0.5\n"
            "wm_info 3\n");
}

TEST(ExpositionWriterTest, ExportersWriteAfterTheRegisteredFamiliesAtEachScrape) {
  Registry registry;
  registry.AddGauge("wm_first", "First.")->WithLabels({}).Set(1);
  int scrapes = 0;
  registry.AddExporter([&scrapes](ExpositionWriter& writer) {
    ++scrapes;
    writer.StartFamily("wm_exported", "Exported.", "gauge");
    writer.Sample("wm_exported", {{"scrape", std::to_string(scrapes)}}, 1);
  });
  std::string first = registry.Render();
  EXPECT_THAT(first, ::testing::HasSubstr("wm_first 1\n# HELP wm_exported Exported.\n"));
  EXPECT_THAT(first, ::testing::EndsWith("wm_exported{scrape=\"1\"} 1\n"));
  EXPECT_THAT(registry.Render(), ::testing::EndsWith("wm_exported{scrape=\"2\"} 1\n"));
}

}  // namespace
}  // namespace wm::observability
