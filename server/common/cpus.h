#ifndef WM_SERVER_COMMON_CPUS_H_
#define WM_SERVER_COMMON_CPUS_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace wm {

// CPUs this process may actually use: the CPUs of its affinity mask, capped
// by its cgroup's CPU quota (rounded up), at least 1. In a container,
// std::thread::hardware_concurrency() reports the node's CPUs: sizing a
// worker pool by it gives a 64-core node 64 workers for a pod limited to 2.
int AvailableCpus();

// The quota in CPUs of a cgroup v2 `cpu.max` file ("200000 100000" -> 2.0);
// nullopt for "max ..." (no quota) or unreadable contents.
std::optional<double> CpuQuotaFromCgroupV2(absl::string_view cpu_max);

// The same from cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us
// ("-1" quota: none).
std::optional<double> CpuQuotaFromCgroupV1(absl::string_view quota_us, absl::string_view period_us);

}  // namespace wm

#endif  // WM_SERVER_COMMON_CPUS_H_
