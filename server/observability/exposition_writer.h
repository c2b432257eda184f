#ifndef WM_SERVER_OBSERVABILITY_EXPOSITION_WRITER_H_
#define WM_SERVER_OBSERVABILITY_EXPOSITION_WRITER_H_

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace wm::observability {

// Writes metric families in the text exposition format 0.0.4 straight into
// a buffer, escaping as the format requires: for exporters of many series
// computed at scrape time (a series per workload and per pod), where a
// Sample per series would cost a vector of strings each. The caller keeps
// each family's samples together and gives each label set once.
class ExpositionWriter {
 public:
  using Label = std::pair<absl::string_view, absl::string_view>;  // name, value

  // REQUIRES: `out` outlives the writer.
  explicit ExpositionWriter(std::string* out) : out_(*out) {}

  // Starts a family: its HELP and TYPE ("gauge", "counter") lines.
  // REQUIRES: `name` is a valid metric name, not started before.
  void StartFamily(absl::string_view name, absl::string_view help, absl::string_view type);

  // One sample: `name` (the family's) with `labels` and `value`. Label
  // values may hold any text; they are escaped.
  void Sample(absl::string_view name, std::initializer_list<Label> labels, double value);

  // The same with the labels given in two parts (a series' identity, then
  // what distinguishes it within the family).
  void Sample(absl::string_view name, std::initializer_list<Label> identity,
              std::initializer_list<Label> labels, double value);

 private:
  void AppendLabels(std::initializer_list<Label> labels, bool* first);

  std::string& out_;
};

}  // namespace wm::observability

#endif  // WM_SERVER_OBSERVABILITY_EXPOSITION_WRITER_H_
