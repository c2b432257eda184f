#include "server/observability/metrics.h"

#include <cmath>
#include <limits>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wm::observability {
namespace {

using ::testing::ElementsAre;

TEST(FormatValueTest, IntegersHaveNoExponent) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(-0.0), "0");
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(-2), "-2");
  EXPECT_EQ(FormatValue(1e6), "1000000");
  EXPECT_EQ(FormatValue(1e15), "1000000000000000");
}

TEST(FormatValueTest, FractionsAreShortestRoundTrip) {
  EXPECT_EQ(FormatValue(0.005), "0.005");
  EXPECT_EQ(FormatValue(0.0001), "0.0001");
  EXPECT_EQ(FormatValue(0.00025), "0.00025");
  EXPECT_EQ(FormatValue(2.5), "2.5");
  EXPECT_EQ(FormatValue(-0.1), "-0.1");
  EXPECT_EQ(FormatValue(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatValue(1e-5), "1e-05");
  EXPECT_EQ(FormatValue(1.5e-7), "1.5e-07");
  EXPECT_EQ(FormatValue(1e22), "1e+22");
}

TEST(FormatValueTest, SpecialValues) {
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(LatencyBucketsTest, Values) {
  EXPECT_THAT(LatencyBuckets(), ElementsAre(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                            0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10));
}

TEST(RegistryTest, EmptyRegistryRendersNothing) {
  Registry registry;
  EXPECT_EQ(registry.Render(), "");
}

TEST(RegistryTest, CounterWithoutLabelsStartsAtZero) {
  Registry registry;
  CounterFamily* family = registry.AddCounter("wm_relists_total", "Relists of any resource.");
  EXPECT_EQ(registry.Render(),
            "# HELP wm_relists_total Relists of any resource.\n"
            "# TYPE wm_relists_total counter\n"
            "wm_relists_total 0\n");
  family->WithLabels({}).Increment();
  family->WithLabels({}).Increment(2.5);
  EXPECT_EQ(family->WithLabels({}).value(), 3.5);
  EXPECT_EQ(registry.Render(),
            "# HELP wm_relists_total Relists of any resource.\n"
            "# TYPE wm_relists_total counter\n"
            "wm_relists_total 3.5\n");
}

TEST(RegistryTest, CounterIgnoresNegativeAndNaNAmounts) {
  Registry registry;
  Counter& counter = registry.AddCounter("c_total", "")->WithLabels({});
  counter.Increment(2);
  counter.Increment(-1);
  counter.Increment(std::nan(""));
  EXPECT_EQ(counter.value(), 2);
}

TEST(RegistryTest, CounterWithLabelsSortsSeries) {
  Registry registry;
  CounterFamily* family =
      registry.AddCounter("wm_rpc_requests_total", "RPCs by method and code.", {"method", "code"});
  family->WithLabels({"ResolveWorkload", "OK"}).Increment(3);
  family->WithLabels({"ListWorkloads", "OK"}).Increment();
  family->WithLabels({"ResolveWorkload", "NOT_FOUND"}).Increment();
  EXPECT_EQ(registry.Render(),
            "# HELP wm_rpc_requests_total RPCs by method and code.\n"
            "# TYPE wm_rpc_requests_total counter\n"
            "wm_rpc_requests_total{method=\"ListWorkloads\",code=\"OK\"} 1\n"
            "wm_rpc_requests_total{method=\"ResolveWorkload\",code=\"NOT_FOUND\"} 1\n"
            "wm_rpc_requests_total{method=\"ResolveWorkload\",code=\"OK\"} 3\n");
}

TEST(RegistryTest, WithLabelsReturnsTheSameSeries) {
  Registry registry;
  CounterFamily* family = registry.AddCounter("c_total", "", {"a"});
  Counter& first = family->WithLabels({"x"});
  Counter& again = family->WithLabels({"x"});
  EXPECT_EQ(&first, &again);
  EXPECT_NE(&first, &family->WithLabels({"y"}));
}

TEST(RegistryTest, LabeledFamilyWithoutSeriesIsOmitted) {
  Registry registry;
  registry.AddCounter("a_total", "A.", {"kind"});
  registry.AddGauge("b", "B.")->WithLabels({}).Set(1);
  EXPECT_EQ(registry.Render(),
            "# HELP b B.\n"
            "# TYPE b gauge\n"
            "b 1\n");
}

TEST(RegistryTest, EmptyHelpOmitsHelpLine) {
  Registry registry;
  registry.AddGauge("g", "");
  EXPECT_EQ(registry.Render(),
            "# TYPE g gauge\n"
            "g 0\n");
}

TEST(RegistryTest, Gauges) {
  Registry registry;
  GaugeFamily* family = registry.AddGauge("wm_watches", "Open watches.", {"resource"});
  Gauge& pods = family->WithLabels({"pods"});
  pods.Set(5);
  pods.Add(-2);
  family->WithLabels({"deployments"}).Add(0.25);
  family->WithLabels({"jobs"}).Set(-1.5);
  EXPECT_EQ(pods.value(), 3);
  EXPECT_EQ(registry.Render(),
            "# HELP wm_watches Open watches.\n"
            "# TYPE wm_watches gauge\n"
            "wm_watches{resource=\"deployments\"} 0.25\n"
            "wm_watches{resource=\"jobs\"} -1.5\n"
            "wm_watches{resource=\"pods\"} 3\n");
}

TEST(RegistryTest, FamiliesRenderInRegistrationOrder) {
  Registry registry;
  registry.AddGauge("zeta", "Z.");
  registry.AddCounter("alpha_total", "A.");
  EXPECT_EQ(registry.Render(),
            "# HELP zeta Z.\n"
            "# TYPE zeta gauge\n"
            "zeta 0\n"
            "# HELP alpha_total A.\n"
            "# TYPE alpha_total counter\n"
            "alpha_total 0\n");
}

TEST(RegistryTest, HistogramWithoutLabels) {
  Registry registry;
  HistogramFamily* family =
      registry.AddHistogram("wm_resolve_seconds", "Resolution latency.", {}, {0.005, 0.1, 1});
  Histogram& histogram = family->WithLabels({});
  histogram.Observe(0.001);
  histogram.Observe(0.05);
  histogram.Observe(0.05);
  histogram.Observe(3);
  EXPECT_EQ(registry.Render(),
            "# HELP wm_resolve_seconds Resolution latency.\n"
            "# TYPE wm_resolve_seconds histogram\n"
            "wm_resolve_seconds_bucket{le=\"0.005\"} 1\n"
            "wm_resolve_seconds_bucket{le=\"0.1\"} 3\n"
            "wm_resolve_seconds_bucket{le=\"1\"} 3\n"
            "wm_resolve_seconds_bucket{le=\"+Inf\"} 4\n"
            "wm_resolve_seconds_sum 3.101\n"
            "wm_resolve_seconds_count 4\n");
}

TEST(RegistryTest, HistogramWithLabels) {
  Registry registry;
  HistogramFamily* family =
      registry.AddHistogram("rpc_seconds", "RPC latency.", {"method"}, {0.5, 2.5});
  family->WithLabels({"Resolve"}).Observe(1);
  family->WithLabels({"List"}).Observe(0.25);
  EXPECT_EQ(registry.Render(),
            "# HELP rpc_seconds RPC latency.\n"
            "# TYPE rpc_seconds histogram\n"
            "rpc_seconds_bucket{method=\"List\",le=\"0.5\"} 1\n"
            "rpc_seconds_bucket{method=\"List\",le=\"2.5\"} 1\n"
            "rpc_seconds_bucket{method=\"List\",le=\"+Inf\"} 1\n"
            "rpc_seconds_sum{method=\"List\"} 0.25\n"
            "rpc_seconds_count{method=\"List\"} 1\n"
            "rpc_seconds_bucket{method=\"Resolve\",le=\"0.5\"} 0\n"
            "rpc_seconds_bucket{method=\"Resolve\",le=\"2.5\"} 1\n"
            "rpc_seconds_bucket{method=\"Resolve\",le=\"+Inf\"} 1\n"
            "rpc_seconds_sum{method=\"Resolve\"} 1\n"
            "rpc_seconds_count{method=\"Resolve\"} 1\n");
}

TEST(RegistryTest, HistogramBoundsAreInclusive) {
  Registry registry;
  Histogram& histogram = registry.AddHistogram("h", "", {}, LatencyBuckets())->WithLabels({});
  histogram.Observe(0.0001);   // exactly the first bound
  histogram.Observe(0.00011);  // just above it
  histogram.Observe(10);       // exactly the last bound
  histogram.Observe(10.5);     // above every bound
  histogram.Observe(0);
  histogram.Observe(-1);  // below every bound: the first bucket
  std::vector<uint64_t> expected(17, 0);
  expected[0] = 3;
  expected[1] = 1;
  expected[15] = 1;
  expected[16] = 1;
  EXPECT_EQ(histogram.bucket_counts(), expected);
  EXPECT_EQ(histogram.count(), 6u);
}

TEST(RegistryTest, HistogramNaNCountsOnlyTowardsInf) {
  Registry registry;
  Histogram& histogram = registry.AddHistogram("h", "", {}, {1})->WithLabels({});
  histogram.Observe(std::nan(""));
  EXPECT_THAT(histogram.bucket_counts(), ElementsAre(0, 1));
  EXPECT_EQ(registry.Render(),
            "# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\n"
            "h_bucket{le=\"+Inf\"} 1\n"
            "h_sum NaN\n"
            "h_count 1\n");
}

TEST(RegistryTest, HistogramDropsTrailingInfBound) {
  Registry registry;
  Histogram& histogram =
      registry.AddHistogram("h", "", {}, {1, std::numeric_limits<double>::infinity()})
          ->WithLabels({});
  EXPECT_THAT(histogram.bounds(), ElementsAre(1));
}

TEST(RegistryTest, EscapesLabelValuesAndHelp) {
  Registry registry;
  CounterFamily* family =
      registry.AddCounter("c_total", "Help with \\ backslash,\nnewline and \"quotes\".", {"v"});
  family->WithLabels({"a\\b\"c\nd"}).Increment();
  EXPECT_EQ(registry.Render(),
            "# HELP c_total Help with \\\\ backslash,\\nnewline and \"quotes\".\n"
            "# TYPE c_total counter\n"
            "c_total{v=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(RegistryTest, EscapesHistogramLabelValues) {
  Registry registry;
  registry.AddHistogram("h", "", {"v"}, {1})->WithLabels({"\""}).Observe(1);
  EXPECT_EQ(registry.Render(),
            "# TYPE h histogram\n"
            "h_bucket{v=\"\\\"\",le=\"1\"} 1\n"
            "h_bucket{v=\"\\\"\",le=\"+Inf\"} 1\n"
            "h_sum{v=\"\\\"\"} 1\n"
            "h_count{v=\"\\\"\"} 1\n");
}

TEST(RegistryTest, ConcurrentIncrementsSumExactly) {
  Registry registry;
  CounterFamily* counters = registry.AddCounter("c_total", "", {"thread_parity"});
  Gauge& gauge = registry.AddGauge("g", "")->WithLabels({});
  HistogramFamily* histograms = registry.AddHistogram("h", "", {"x"}, {0.5});
  constexpr int kThreads = 8;
  constexpr int kIterations = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Looking the series up concurrently creates each one once.
      Counter& counter = counters->WithLabels({t % 2 == 0 ? "even" : "odd"});
      Histogram& histogram = histograms->WithLabels({"shared"});
      for (int i = 0; i < kIterations; ++i) {
        counter.Increment();
        gauge.Add(1);
        histogram.Observe(i % 2 == 0 ? 0.25 : 1);
        if (i % 10000 == 0) registry.Render();  // scrapes race the updates
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counters->WithLabels({"even"}).value(), kThreads / 2 * kIterations);
  EXPECT_EQ(counters->WithLabels({"odd"}).value(), kThreads / 2 * kIterations);
  EXPECT_EQ(gauge.value(), kThreads * kIterations);
  Histogram& histogram = histograms->WithLabels({"shared"});
  EXPECT_EQ(histogram.count(), static_cast<uint64_t>(kThreads * kIterations));
  EXPECT_THAT(histogram.bucket_counts(),
              ElementsAre(kThreads * kIterations / 2, kThreads * kIterations / 2));
  EXPECT_EQ(histogram.sum(), kThreads * kIterations / 2 * 1.25);
}

TEST(RegistryTest, GaugeCallbackIsEvaluatedAtEachScrape) {
  Registry registry;
  int scrapes = 0;
  registry.AddGaugeCallback(
      "wm_cached_objects", "Objects in the cache by kind.", {"kind"}, [&scrapes] {
        ++scrapes;
        return std::vector<Sample>{{{"Pod"}, 10.0 * scrapes}, {{"Deployment"}, 2}};
      });
  EXPECT_EQ(scrapes, 0);
  EXPECT_EQ(registry.Render(),
            "# HELP wm_cached_objects Objects in the cache by kind.\n"
            "# TYPE wm_cached_objects gauge\n"
            "wm_cached_objects{kind=\"Deployment\"} 2\n"
            "wm_cached_objects{kind=\"Pod\"} 10\n");
  EXPECT_EQ(registry.Render(),
            "# HELP wm_cached_objects Objects in the cache by kind.\n"
            "# TYPE wm_cached_objects gauge\n"
            "wm_cached_objects{kind=\"Deployment\"} 2\n"
            "wm_cached_objects{kind=\"Pod\"} 20\n");
}

TEST(RegistryTest, CallbackDropsBadArityAndRepeatedLabelSets) {
  Registry registry;
  registry.AddGaugeCallback("g", "", {"kind"}, [] {
    return std::vector<Sample>{{{"Pod"}, 1}, {{"Pod", "extra"}, 2}, {{}, 3}, {{"Pod"}, 4}};
  });
  EXPECT_EQ(registry.Render(),
            "# TYPE g gauge\n"
            "g{kind=\"Pod\"} 1\n");
}

TEST(RegistryTest, CallbackWithoutLabelsAndEmptyCallback) {
  Registry registry;
  registry.AddCounterCallback("events_total", "Events.", {}, [] {
    return std::vector<Sample>{{{}, 7}};
  });
  registry.AddGaugeCallback("nothing", "Nothing.", {"kind"}, [] { return std::vector<Sample>(); });
  EXPECT_EQ(registry.Render(),
            "# HELP events_total Events.\n"
            "# TYPE events_total counter\n"
            "events_total 7\n");
}

TEST(RegistryTest, CallbackMayRegisterWithoutDeadlock) {
  Registry registry;
  bool added = false;
  registry.AddGaugeCallback("g", "", {}, [&] {
    if (!added) {
      added = true;
      registry.AddGauge("late", "");
    }
    return std::vector<Sample>{{{}, 1}};
  });
  registry.Render();
  EXPECT_EQ(registry.Render(),
            "# TYPE g gauge\n"
            "g 1\n"
            "# TYPE late gauge\n"
            "late 0\n");
}

using RegistryDeathTest = ::testing::Test;

TEST(RegistryDeathTest, DuplicateName) {
  Registry registry;
  registry.AddCounter("x_total", "");
  EXPECT_DEATH(registry.AddGauge("x_total", ""), "x_total registered twice");
}

TEST(RegistryDeathTest, InvalidNames) {
  Registry registry;
  EXPECT_DEATH(registry.AddCounter("1abc", ""), "invalid metric name");
  EXPECT_DEATH(registry.AddCounter("a-b", ""), "invalid metric name");
  EXPECT_DEATH(registry.AddCounter("ok", "", {"__reserved"}), "invalid label name");
  EXPECT_DEATH(registry.AddCounter("ok", "", {"a:b"}), "invalid label name");
  EXPECT_DEATH(registry.AddCounter("ok", "", {"a", "a"}), "given twice");
  EXPECT_DEATH(registry.AddHistogram("ok", "", {"le"}, {1}), "reserved");
}

TEST(RegistryDeathTest, BadBuckets) {
  Registry registry;
  EXPECT_DEATH(registry.AddHistogram("h", "", {}, {1, 1}), "strictly increasing");
  EXPECT_DEATH(registry.AddHistogram("h", "", {}, {2, 1}), "strictly increasing");
  EXPECT_DEATH(registry.AddHistogram("h", "", {}, {std::nan("")}), "finite");
}

TEST(RegistryDeathTest, WrongNumberOfLabelValues) {
  Registry registry;
  CounterFamily* family = registry.AddCounter("c_total", "", {"a", "b"});
  EXPECT_DEATH(family->WithLabels({"x"}), "1 label values \\[x\\] for 2 label names \\[a,b\\]");
}

}  // namespace
}  // namespace wm::observability
