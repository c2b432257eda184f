#ifndef WM_SERVER_OBSERVABILITY_METRICS_H_
#define WM_SERVER_OBSERVABILITY_METRICS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/observability/exposition_writer.h"

namespace wm::observability {

// Our own small Prometheus client (there is no prometheus-cpp package to build
// against): families of counters, gauges and histograms, rendered in the text
// exposition format 0.0.4.
//
// Registration mistakes (invalid or duplicate names, unsorted buckets, the
// wrong number of label values) are programming errors and abort with a
// message, like a failed CHECK: metrics are declared once at startup, so a
// test of that startup catches them.

// The Content-Type of Registry::Render()'s output.
inline constexpr absl::string_view kTextFormatContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Latency bucket upper bounds in seconds, 100µs to 10s.
std::vector<double> LatencyBuckets();

// A sample value as the text format writes it: integers without an exponent
// ("3", "-2", "1000000"), other numbers as the shortest text that reads back
// exactly ("0.005", "1e-05"), and "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);

// A value that only goes up. Lock-free.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Negative and NaN amounts are ignored: a decrease would read as a counter
  // reset to Prometheus.
  void Increment(double amount = 1);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that goes up and down. Lock-free.
class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double amount) { value_.fetch_add(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Counts observations into buckets by upper bound (inclusive: an observation
// equal to a bound lands in that bound's bucket). Lock-free; a scrape racing
// an Observe may see the new count before the new sum, never a count that
// disagrees with the buckets.
class Histogram {
 public:
  // `bounds` (strictly increasing, without +Inf) must outlive the histogram.
  explicit Histogram(const std::vector<double>* bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // NaN counts only towards +Inf (and makes the sum NaN), as in client_golang.
  void Observe(double value);

  // Per-bucket (not cumulative) counts, one per bound and a last for +Inf.
  std::vector<uint64_t> bucket_counts() const;
  uint64_t count() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  const std::vector<double>& bounds() const { return *bounds_; }

 private:
  const std::vector<double>* bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_->size() + 1
  std::atomic<double> sum_{0};
};

namespace internal {

// What the registry holds: a named family that can render itself.
class Family {
 public:
  Family(std::string name, std::string help, std::string type,
         std::vector<std::string> label_names);
  virtual ~Family() = default;
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& label_names() const { return label_names_; }
  // Appends the family's HELP, TYPE and samples; nothing if it has no samples.
  void Render(std::string* out) const;

 protected:
  // Appends the samples alone.
  virtual void RenderSamples(std::string* out) const = 0;
  // Aborts unless there is one value per label name.
  void CheckArity(const std::vector<std::string>& label_values) const;

 private:
  std::string name_, help_, type_;
  std::vector<std::string> label_names_;
};

// The series of one family by label values. std::map keeps the rendering
// order sorted and the series' addresses stable.
template <typename Series>
class SeriesMap {
 public:
  template <typename... Args>
  Series& GetOrCreate(const std::vector<std::string>& label_values, Args&&... args) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = series_.find(label_values);
    if (it == series_.end()) {
      it = series_
               .emplace(std::piecewise_construct, std::forward_as_tuple(label_values),
                        std::forward_as_tuple(std::forward<Args>(args)...))
               .first;
    }
    return it->second;
  }
  // Calls `f(label_values, series)` in label order, under the lock.
  template <typename F>
  void ForEach(F f) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [labels, series] : series_) f(labels, series);
  }

 private:
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, Series> series_;
};

}  // namespace internal

// WithLabels() takes one value per label name, in the order of the names,
// and returns the series for them, creating it on first use. The reference
// stays valid as long as the registry; look it up once and keep it on hot
// paths (the lookup takes a lock). A family without labels has its one
// series from the start: WithLabels({}).
class CounterFamily final : public internal::Family {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);
  Counter& WithLabels(const std::vector<std::string>& label_values);

 private:
  void RenderSamples(std::string* out) const override;
  internal::SeriesMap<Counter> series_;
};

class GaugeFamily final : public internal::Family {
 public:
  GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names);
  Gauge& WithLabels(const std::vector<std::string>& label_values);

 private:
  void RenderSamples(std::string* out) const override;
  internal::SeriesMap<Gauge> series_;
};

class HistogramFamily final : public internal::Family {
 public:
  // `bounds`: strictly increasing finite upper bounds; a trailing +Inf is
  // implied (and dropped if given). Label "le" is reserved.
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> bounds);
  Histogram& WithLabels(const std::vector<std::string>& label_values);

 private:
  void RenderSamples(std::string* out) const override;
  std::vector<double> bounds_;
  internal::SeriesMap<Histogram> series_;
};

// One sample of a callback family: label values (one per label name) and
// the value.
struct Sample {
  std::vector<std::string> label_values;
  double value = 0;
};
using SampleCallback = std::function<std::vector<Sample>()>;

// A family whose samples a callback computes at each scrape, for values that
// live elsewhere (objects per kind in the cache). Samples with the wrong
// number of label values are dropped, as are repeats of a label set (the
// first wins): a scrape must not fail over them.
class CallbackFamily final : public internal::Family {
 public:
  CallbackFamily(std::string name, std::string help, std::string type,
                 std::vector<std::string> label_names, SampleCallback callback);

 private:
  void RenderSamples(std::string* out) const override;
  SampleCallback callback_;
};

// The set of families a /metrics endpoint exports. Thread-safe; families
// live as long as the registry and cannot be removed.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Names follow [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*
  // without a leading "__"; a name may be registered once.
  CounterFamily* AddCounter(std::string name, std::string help,
                            std::vector<std::string> label_names = {});
  GaugeFamily* AddGauge(std::string name, std::string help,
                        std::vector<std::string> label_names = {});
  HistogramFamily* AddHistogram(std::string name, std::string help,
                                std::vector<std::string> label_names, std::vector<double> bounds);

  // Families computed at scrape time. The callback runs on the scraping
  // thread, without the registry's lock held, once per Render().
  void AddGaugeCallback(std::string name, std::string help, std::vector<std::string> label_names,
                        SampleCallback callback);
  void AddCounterCallback(std::string name, std::string help, std::vector<std::string> label_names,
                          SampleCallback callback);

  // Families an exporter writes itself at each scrape, after every other
  // family, on the scraping thread without the registry's lock held: for
  // many series computed from state held elsewhere (a series per workload,
  // per pod). REQUIRES: the exporter writes no family registered here.
  void AddExporter(std::function<void(ExpositionWriter&)> exporter);

  // Every family in registration order, each family's series sorted by
  // label values; families without samples are left out; then the
  // exporters' families.
  std::string Render() const;
  // The same, handed to `sink` in chunks of about `chunk_bytes` as it is
  // written (for a scrape sent while it is rendered). False once the sink
  // said false (the rest was not rendered).
  bool RenderTo(const ExpositionWriter::Sink& sink, size_t chunk_bytes = 64 * 1024) const;

 private:
  template <typename F>
  F* Add(std::unique_ptr<F> family);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<internal::Family>> families_;
  std::vector<std::shared_ptr<const std::function<void(ExpositionWriter&)>>> exporters_;
};

}  // namespace wm::observability

#endif  // WM_SERVER_OBSERVABILITY_METRICS_H_
