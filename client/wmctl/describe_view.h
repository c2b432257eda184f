#ifndef WM_CLIENT_WMCTL_DESCRIBE_VIEW_H_
#define WM_CLIENT_WMCTL_DESCRIBE_VIEW_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "server/common/json.h"
#include "workloadmap/v1/workload.pb.h"

namespace wm::wmctl {

struct DescribeOptions {
  // Manifest read from a file: no age; rows show desired replicas unless
  // pods were given too.
  bool file_mode = false;
  bool has_pods = false;
  int pod_limit = 0;        // 0 = all
  int component_limit = 0;  // 0 = all
  absl::Time now;           // for the age
};

// kli's describe text: header, component tree with pods, Phase, and the
// Resources table (format §5.4). A multi-instance component (a JobSet's
// replicatedjob) has its own row with the sums of its instances, which are
// beneath it (--component-limit applies to them as to the top rows); the
// Resources table lists the instances. A component that could not be
// resolved has its row in the tree with its error ("error: <field>:
// <message>") and none in the Resources table.
std::string DescribeText(const workloadmap::v1::ResolvedWorkload& w, const DescribeOptions& o);

// kli's DescribeView for -o json/yaml, plus matchedStatuses, conditions and
// the gang instructions. Components nest as the text's tree does (a
// multi-instance component with its instances as children); one that could
// not be resolved is
// {"name", "kind", "error": {"fieldPath", "message"}}.
Json DescribeJson(const workloadmap::v1::ResolvedWorkload& w, const DescribeOptions& o);

// The time since `creation_timestamp` at `now`: "45s", "30m", "2h", "5d";
// "<unknown>" when the timestamp does not parse.
std::string Age(const std::string& creation_timestamp, absl::Time now);

// Columns `gap` spaces apart, trailing spaces trimmed; a one-cell line (a
// note) spans the row and sets no width. The tables of describe, get and gang.
std::string AlignColumns(const std::vector<std::vector<std::string>>& lines, size_t gap);

}  // namespace wm::wmctl

#endif  // WM_CLIENT_WMCTL_DESCRIBE_VIEW_H_
