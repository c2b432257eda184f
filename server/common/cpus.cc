#include "server/common/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/common/file.h"

namespace wm {
namespace {

std::optional<std::string> ReadFile(const std::string& path) {
  absl::StatusOr<std::string> content = ReadFileToString(path);
  if (!content.ok()) return std::nullopt;
  return *std::move(content);
}

std::optional<double> Quota(double quota, double period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return quota / period;
}

// The process's cgroup quota: cgroup v2 (the unified hierarchy every
// current distribution and the kubelet use) first, then v1. Only the
// process's own cgroup is read, which is the container's in a pod.
std::optional<double> CgroupCpuQuota() {
  if (auto cpu_max = ReadFile("/sys/fs/cgroup/cpu.max")) return CpuQuotaFromCgroupV2(*cpu_max);
  auto quota = ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  auto period = ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  if (quota && period) return CpuQuotaFromCgroupV1(*quota, *period);
  return std::nullopt;
}

}  // namespace

std::optional<double> CpuQuotaFromCgroupV2(absl::string_view cpu_max) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(cpu_max), ' ', absl::SkipEmpty());
  double quota = 0, period = 0;
  if (fields.size() != 2 || !absl::SimpleAtod(fields[0], &quota) ||
      !absl::SimpleAtod(fields[1], &period)) {
    return std::nullopt;  // "max 100000" lands here too: no quota
  }
  return Quota(quota, period);
}

std::optional<double> CpuQuotaFromCgroupV1(absl::string_view quota_us,
                                           absl::string_view period_us) {
  double quota = 0, period = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(quota_us), &quota) ||
      !absl::SimpleAtod(absl::StripAsciiWhitespace(period_us), &period)) {
    return std::nullopt;
  }
  return Quota(quota, period);
}

int AvailableCpus() {
  int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
  if (std::optional<double> quota = CgroupCpuQuota()) {
    cpus = std::min(cpus, std::max(1, static_cast<int>(std::ceil(*quota))));
  }
  return cpus;
}

}  // namespace wm
