#include "server/observability/exposition_writer.h"

#include "absl/strings/str_cat.h"
#include "server/observability/internal/text_format.h"
#include "server/observability/metrics.h"

namespace wm::observability {

void ExpositionWriter::StartFamily(absl::string_view name, absl::string_view help,
                                   absl::string_view type) {
  absl::StrAppend(&out_, "# HELP ", name, " ");
  internal::AppendHelp(help, &out_);
  absl::StrAppend(&out_, "\n# TYPE ", name, " ", type, "\n");
}

void ExpositionWriter::AppendLabels(std::initializer_list<Label> labels, bool* first) {
  for (const auto& [name, value] : labels) {
    out_.push_back(*first ? '{' : ',');
    *first = false;
    absl::StrAppend(&out_, name, "=\"");
    internal::AppendLabelValue(value, &out_);
    out_.push_back('"');
  }
}

void ExpositionWriter::Sample(absl::string_view name, std::initializer_list<Label> labels,
                              double value) {
  Sample(name, labels, {}, value);
}

void ExpositionWriter::Sample(absl::string_view name, std::initializer_list<Label> identity,
                              std::initializer_list<Label> labels, double value) {
  out_.append(name.data(), name.size());
  bool first = true;
  AppendLabels(identity, &first);
  AppendLabels(labels, &first);
  if (!first) out_.push_back('}');
  absl::StrAppend(&out_, " ", FormatValue(value), "\n");
}

}  // namespace wm::observability
