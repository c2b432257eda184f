#ifndef WM_BENCH_LATENCY_HISTOGRAM_H_
#define WM_BENCH_LATENCY_HISTOGRAM_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <limits>

namespace wm::bench {

// A log-linear histogram of durations in nanoseconds, as HdrHistogram:
// every power of two is split into 128 equal buckets, so a bucket is at
// most 1/128 (0.8 %) of its values wide. Fixed size (35 KB), no allocation
// while recording; Record is lock-free and may be called from any thread.
// Covers 0 ns to 2^41 ns (36 minutes); longer values count in the top bucket.
class LatencyHistogram {
 public:
  void Record(int64_t nanos) {
    uint64_t v = nanos < 0 ? 0 : static_cast<uint64_t>(nanos);
    counts_[Index(v)].fetch_add(1, std::memory_order_relaxed);
    count_.fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
    uint64_t max = max_.load(std::memory_order_relaxed);
    while (v > max && !max_.compare_exchange_weak(max, v, std::memory_order_relaxed)) {
    }
  }

  uint64_t Count() const { return count_.load(std::memory_order_relaxed); }
  uint64_t Max() const { return max_.load(std::memory_order_relaxed); }
  double Mean() const {
    uint64_t n = Count();
    return n == 0 ? 0 : static_cast<double>(sum_.load(std::memory_order_relaxed)) / n;
  }

  // The smallest recorded value v such that a fraction q (0..1) of the
  // values are <= v, up to the bucket's width (reported as the bucket's
  // upper bound, never above Max()); 0 when empty. Call when recording
  // has stopped.
  uint64_t Percentile(double q) const {
    uint64_t n = Count();
    if (n == 0) return 0;
    // The rank of the value sought, 1-based: ceil(q * n), at least 1.
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(n));
    if (static_cast<double>(rank) < q * static_cast<double>(n)) ++rank;
    if (rank == 0) rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      seen += counts_[i].load(std::memory_order_relaxed);
      // (The top bucket has no upper bound but the maximum.)
      if (seen >= rank) return i == kBuckets - 1 ? Max() : std::min(UpperBound(i), Max());
    }
    return Max();
  }

 private:
  static constexpr int kSubBits = 7;  // 128 buckets per power of two
  static constexpr uint64_t kSub = uint64_t{1} << kSubBits;
  static constexpr int kTopExponent = 40;
  static constexpr size_t kBuckets = kSub + (kTopExponent - kSubBits + 1) * kSub;

  // Values below 128 have a bucket each; above, a value with highest bit e
  // falls in bucket (e - 6) * 128 + the 7 bits after its highest one.
  static size_t Index(uint64_t v) {
    if (v < kSub) return v;
    int e = std::bit_width(v) - 1;
    if (e > kTopExponent) return kBuckets - 1;
    return static_cast<size_t>(e - kSubBits + 1) * kSub + ((v >> (e - kSubBits)) - kSub);
  }
  static uint64_t UpperBound(size_t i) {
    if (i < kSub) return i;
    int e = static_cast<int>(i / kSub) + kSubBits - 1;
    uint64_t low = (kSub + i % kSub) << (e - kSubBits);
    return low + (uint64_t{1} << (e - kSubBits)) - 1;
  }

  std::array<std::atomic<uint64_t>, kBuckets> counts_{};
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_{0};
  std::atomic<uint64_t> max_{0};
};

}  // namespace wm::bench

#endif  // WM_BENCH_LATENCY_HISTOGRAM_H_
