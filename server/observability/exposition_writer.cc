#include "server/observability/exposition_writer.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "server/observability/internal/text_format.h"
#include "server/observability/metrics.h"

namespace wm::observability {

void ExpositionWriter::StartFamily(absl::string_view name, absl::string_view help,
                                   absl::string_view type) {
  if (!ok_) return;
  absl::StrAppend(&out_, "# HELP ", name, " ");
  internal::AppendHelp(help, &out_);
  absl::StrAppend(&out_, "\n# TYPE ", name, " ", type, "\n");
  Written();
}

void ExpositionWriter::AppendRendered(absl::string_view text) {
  if (!ok_) return;
  out_.append(text.data(), text.size());
  Written();
}

bool ExpositionWriter::Flush() {
  if (!sink_ || !ok_) return ok_;
  if (!out_.empty()) ok_ = sink_(out_);
  out_.clear();
  return ok_;
}

ExpositionWriter::EscapedLabels::EscapedLabels(std::initializer_list<Label> labels) {
  bool first = true;
  AppendLabels(labels, &first, &text_);
  if (!text_.empty()) text_.erase(0, 1);  // the '{' a sample writes itself
}

void ExpositionWriter::AppendLabels(std::initializer_list<Label> labels, bool* first,
                                    std::string* out) {
  for (const auto& [name, value] : labels) {
    out->push_back(*first ? '{' : ',');
    *first = false;
    out->append(name.data(), name.size());
    out->append("=\"");
    internal::AppendLabelValue(value, out);
    out->push_back('"');
  }
}

void ExpositionWriter::AppendValue(double value) {
  out_.push_back(' ');
  // Most values are small integers (counts, 0/1): formatted without a
  // string of their own.
  // (What FormatValue prints for them, without its string.)
  if (std::fabs(value) < 2147483647.0 && value == std::trunc(value)) {
    absl::StrAppend(&out_, static_cast<int32_t>(value));
  } else {
    out_.append(FormatValue(value));
  }
  out_.push_back('\n');
  Written();
}

void ExpositionWriter::Sample(absl::string_view name, std::initializer_list<Label> labels,
                              double value) {
  Sample(name, labels, {}, value);
}

void ExpositionWriter::Sample(absl::string_view name, std::initializer_list<Label> identity,
                              std::initializer_list<Label> labels, double value) {
  if (!ok_) return;
  out_.append(name.data(), name.size());
  bool first = true;
  AppendLabels(identity, &first, &out_);
  AppendLabels(labels, &first, &out_);
  if (!first) out_.push_back('}');
  AppendValue(value);
}

void ExpositionWriter::Sample(absl::string_view name, const EscapedLabels& identity,
                              std::initializer_list<Label> labels, double value) {
  if (!ok_) return;
  out_.append(name.data(), name.size());
  bool first = identity.text_.empty();
  if (!first) {
    out_.push_back('{');
    out_.append(identity.text_);
  }
  AppendLabels(labels, &first, &out_);
  if (!first) out_.push_back('}');
  AppendValue(value);
}

}  // namespace wm::observability
