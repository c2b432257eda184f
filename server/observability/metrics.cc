#include "server/observability/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/observability/internal/text_format.h"

namespace wm::observability {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "wm::observability: %s\n", message.c_str());
  std::abort();
}

bool IsMetricName(absl::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// Names starting with "__" are reserved for Prometheus' own labels.
bool IsLabelName(absl::string_view name) {
  if (name.empty() || absl::StartsWith(name, "__")) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

using internal::AppendHelp;
using internal::AppendLabelValue;

// Appends `{a="x",b="y",le="0.5"}`, or nothing when there are no labels.
// `extra_name`/`extra_value` (if `extra_name` is non-empty) come last.
void AppendLabels(const std::vector<std::string>& names, const std::vector<std::string>& values,
                  absl::string_view extra_name, absl::string_view extra_value, std::string* out) {
  if (names.empty() && extra_name.empty()) return;
  out->push_back('{');
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out->push_back(',');
    absl::StrAppend(out, names[i], "=\"");
    AppendLabelValue(values[i], out);
    out->push_back('"');
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out->push_back(',');
    absl::StrAppend(out, extra_name, "=\"");
    AppendLabelValue(extra_value, out);
    out->push_back('"');
  }
  out->push_back('}');
}

void AppendSample(absl::string_view name, const std::vector<std::string>& label_names,
                  const std::vector<std::string>& label_values, double value, std::string* out) {
  out->append(name.data(), name.size());
  AppendLabels(label_names, label_values, "", "", out);
  absl::StrAppend(out, " ", FormatValue(value), "\n");
}

}  // namespace

std::vector<double> LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Below 2^53 every integer is exact, so printing it as one loses nothing;
  // this keeps counts readable ("1000000", not "1e+06").
  if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  // Shortest round-trip digits; fixed notation unless the exponent is very
  // small or large (the rule of C's and Go's %g, which client_golang uses).
  char buffer[64];
  auto scientific =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string text(buffer, scientific.ptr);
  size_t e = text.find('e');
  int exponent = e == std::string::npos ? 0 : std::atoi(text.c_str() + e + 1);
  if (exponent < -4 || exponent >= 21) return text;
  auto fixed = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed);
  return std::string(buffer, fixed.ptr);
}

void Counter::Increment(double amount) {
  if (!(amount >= 0)) return;
  value_.fetch_add(amount, std::memory_order_relaxed);
}

Histogram::Histogram(const std::vector<double>* bounds)
    : bounds_(bounds), buckets_(new std::atomic<uint64_t>[bounds->size() + 1]) {
  for (size_t i = 0; i <= bounds_->size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double value) {
  // The first bound >= value: bounds are inclusive upper limits.
  size_t bucket = std::isnan(value) ? bounds_->size()
                                    : std::lower_bound(bounds_->begin(), bounds_->end(), value) -
                                          bounds_->begin();
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::bucket_counts() const {
  std::vector<uint64_t> counts(bounds_->size() + 1);
  for (size_t i = 0; i < counts.size(); ++i) {
    counts[i] = buckets_[i].load(std::memory_order_relaxed);
  }
  return counts;
}

uint64_t Histogram::count() const {
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
  }
  return total;
}

namespace internal {

Family::Family(std::string name, std::string help, std::string type,
               std::vector<std::string> label_names)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(std::move(type)),
      label_names_(std::move(label_names)) {
  if (!IsMetricName(name_)) Die(absl::StrCat("invalid metric name \"", name_, "\""));
  for (size_t i = 0; i < label_names_.size(); ++i) {
    if (!IsLabelName(label_names_[i])) {
      Die(absl::StrCat("metric ", name_, ": invalid label name \"", label_names_[i], "\""));
    }
    for (size_t j = 0; j < i; ++j) {
      if (label_names_[j] == label_names_[i]) {
        Die(absl::StrCat("metric ", name_, ": label \"", label_names_[i], "\" given twice"));
      }
    }
  }
}

void Family::Render(std::string* out) const {
  std::string samples;
  RenderSamples(&samples);
  if (samples.empty()) return;
  if (!help_.empty()) {
    absl::StrAppend(out, "# HELP ", name_, " ");
    AppendHelp(help_, out);
    out->push_back('\n');
  }
  absl::StrAppend(out, "# TYPE ", name_, " ", type_, "\n", samples);
}

void Family::CheckArity(const std::vector<std::string>& label_values) const {
  if (label_values.size() != label_names_.size()) {
    Die(absl::StrCat("metric ", name_, ": ", label_values.size(), " label values [",
                     absl::StrJoin(label_values, ","), "] for ", label_names_.size(),
                     " label names [", absl::StrJoin(label_names_, ","), "]"));
  }
}

}  // namespace internal

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> label_names)
    : Family(std::move(name), std::move(help), "counter", std::move(label_names)) {
  if (this->label_names().empty()) series_.GetOrCreate({});
}

Counter& CounterFamily::WithLabels(const std::vector<std::string>& label_values) {
  CheckArity(label_values);
  return series_.GetOrCreate(label_values);
}

void CounterFamily::RenderSamples(std::string* out) const {
  series_.ForEach([&](const std::vector<std::string>& labels, const Counter& counter) {
    AppendSample(name(), label_names(), labels, counter.value(), out);
  });
}

GaugeFamily::GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : Family(std::move(name), std::move(help), "gauge", std::move(label_names)) {
  if (this->label_names().empty()) series_.GetOrCreate({});
}

Gauge& GaugeFamily::WithLabels(const std::vector<std::string>& label_values) {
  CheckArity(label_values);
  return series_.GetOrCreate(label_values);
}

void GaugeFamily::RenderSamples(std::string* out) const {
  series_.ForEach([&](const std::vector<std::string>& labels, const Gauge& gauge) {
    AppendSample(name(), label_names(), labels, gauge.value(), out);
  });
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names, std::vector<double> bounds)
    : Family(std::move(name), std::move(help), "histogram", std::move(label_names)),
      bounds_(std::move(bounds)) {
  if (!bounds_.empty() && bounds_.back() == INFINITY) bounds_.pop_back();
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && !(bounds_[i - 1] < bounds_[i]))) {
      Die(absl::StrCat("histogram ", this->name(),
                       ": bucket bounds must be finite and strictly increasing"));
    }
  }
  for (const std::string& label : this->label_names()) {
    if (label == "le") Die(absl::StrCat("histogram ", this->name(), ": label \"le\" is reserved"));
  }
  if (this->label_names().empty()) series_.GetOrCreate({}, &bounds_);
}

Histogram& HistogramFamily::WithLabels(const std::vector<std::string>& label_values) {
  CheckArity(label_values);
  return series_.GetOrCreate(label_values, &bounds_);
}

void HistogramFamily::RenderSamples(std::string* out) const {
  const std::string bucket_name = absl::StrCat(name(), "_bucket");
  series_.ForEach([&](const std::vector<std::string>& labels, const Histogram& histogram) {
    // Read the buckets once and derive the count from them, so that +Inf
    // and _count agree even while observations race the scrape.
    std::vector<uint64_t> counts = histogram.bucket_counts();
    double sum = histogram.sum();
    uint64_t cumulative = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      cumulative += counts[i];
      std::string le = i < bounds_.size() ? FormatValue(bounds_[i]) : "+Inf";
      out->append(bucket_name);
      AppendLabels(label_names(), labels, "le", le, out);
      absl::StrAppend(out, " ", cumulative, "\n");
    }
    AppendSample(absl::StrCat(name(), "_sum"), label_names(), labels, sum, out);
    AppendSample(absl::StrCat(name(), "_count"), label_names(), labels,
                 static_cast<double>(cumulative), out);
  });
}

CallbackFamily::CallbackFamily(std::string name, std::string help, std::string type,
                               std::vector<std::string> label_names, SampleCallback callback)
    : Family(std::move(name), std::move(help), std::move(type), std::move(label_names)),
      callback_(std::move(callback)) {}

void CallbackFamily::RenderSamples(std::string* out) const {
  std::vector<Sample> samples = callback_();
  std::erase_if(samples, [&](const Sample& sample) {
    return sample.label_values.size() != label_names().size();
  });
  std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
    return a.label_values < b.label_values;
  });
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i > 0 && samples[i].label_values == samples[i - 1].label_values) continue;
    AppendSample(name(), label_names(), samples[i].label_values, samples[i].value, out);
  }
}

template <typename F>
F* Registry::Add(std::unique_ptr<F> family) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& existing : families_) {
    if (existing->name() == family->name()) {
      Die(absl::StrCat("metric ", family->name(), " registered twice"));
    }
  }
  F* result = family.get();
  families_.push_back(std::move(family));
  return result;
}

CounterFamily* Registry::AddCounter(std::string name, std::string help,
                                    std::vector<std::string> label_names) {
  return Add(
      std::make_unique<CounterFamily>(std::move(name), std::move(help), std::move(label_names)));
}

GaugeFamily* Registry::AddGauge(std::string name, std::string help,
                                std::vector<std::string> label_names) {
  return Add(
      std::make_unique<GaugeFamily>(std::move(name), std::move(help), std::move(label_names)));
}

HistogramFamily* Registry::AddHistogram(std::string name, std::string help,
                                        std::vector<std::string> label_names,
                                        std::vector<double> bounds) {
  return Add(std::make_unique<HistogramFamily>(std::move(name), std::move(help),
                                               std::move(label_names), std::move(bounds)));
}

void Registry::AddGaugeCallback(std::string name, std::string help,
                                std::vector<std::string> label_names, SampleCallback callback) {
  Add(std::make_unique<CallbackFamily>(std::move(name), std::move(help), "gauge",
                                       std::move(label_names), std::move(callback)));
}

void Registry::AddCounterCallback(std::string name, std::string help,
                                  std::vector<std::string> label_names, SampleCallback callback) {
  Add(std::make_unique<CallbackFamily>(std::move(name), std::move(help), "counter",
                                       std::move(label_names), std::move(callback)));
}

std::string Registry::Render() const {
  std::string out;
  RenderTo([&out](absl::string_view chunk) {
    out.append(chunk.data(), chunk.size());
    return true;
  });
  return out;
}

bool Registry::RenderTo(const ExpositionWriter::Sink& sink, size_t chunk_bytes) const {
  // Render outside the lock: callbacks may be slow or register families.
  // Families are never removed, so the pointers stay valid.
  std::vector<const internal::Family*> families;
  std::vector<std::shared_ptr<const std::function<void(ExpositionWriter&)>>> exporters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    families.reserve(families_.size());
    for (const auto& family : families_) families.push_back(family.get());
    exporters = exporters_;
  }
  ExpositionWriter writer(sink, chunk_bytes);
  std::string text;
  for (const internal::Family* family : families) {
    text.clear();
    family->Render(&text);
    writer.AppendRendered(text);
  }
  for (const auto& exporter : exporters) {
    if (writer.ok()) (*exporter)(writer);
  }
  return writer.Flush();
}

void Registry::AddExporter(std::function<void(ExpositionWriter&)> exporter) {
  std::lock_guard<std::mutex> lock(mu_);
  exporters_.push_back(
      std::make_shared<const std::function<void(ExpositionWriter&)>>(std::move(exporter)));
}

}  // namespace wm::observability
