#ifndef WM_SERVER_OBSERVABILITY_EXPOSITION_WRITER_H_
#define WM_SERVER_OBSERVABILITY_EXPOSITION_WRITER_H_

#include <cstddef>
#include <functional>
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
//
// Either into a string the caller owns, or in chunks to a sink (a scrape of
// 100,000 pods is some 50 MB of text; sent as it is written, it never
// exists whole).
class ExpositionWriter {
 public:
  using Label = std::pair<absl::string_view, absl::string_view>;  // name, value
  // Takes a chunk of text; false stops the writing (the client is gone).
  using Sink = std::function<bool(absl::string_view chunk)>;

  // Labels escaped once (`a="x",b="y"`), for the many samples that share
  // them (a workload's identity on each of its series).
  class EscapedLabels {
   public:
    explicit EscapedLabels(std::initializer_list<Label> labels);
    EscapedLabels() = default;

   private:
    friend class ExpositionWriter;
    std::string text_;
  };

  // REQUIRES: `out` outlives the writer.
  explicit ExpositionWriter(std::string* out) : out_(*out) {}
  // Hands the text to `sink` in chunks of about `chunk_bytes`; Flush()
  // hands over the rest. Once the sink says false, everything else is
  // dropped and ok() is false.
  ExpositionWriter(Sink sink, size_t chunk_bytes)
      : out_(own_), sink_(std::move(sink)), chunk_bytes_(chunk_bytes) {}
  ExpositionWriter(const ExpositionWriter&) = delete;
  ExpositionWriter& operator=(const ExpositionWriter&) = delete;

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
  void Sample(absl::string_view name, const EscapedLabels& identity,
              std::initializer_list<Label> labels, double value);

  // Text already in the format (whole lines), as is.
  void AppendRendered(absl::string_view text);
  // With a sink: hands it what is buffered. Whether the sink took all so far.
  bool Flush();
  bool ok() const { return ok_; }

 private:
  static void AppendLabels(std::initializer_list<Label> labels, bool* first, std::string* out);
  void AppendValue(double value);
  // After each line: with a sink, flushes a full chunk.
  void Written() {
    if (sink_ && out_.size() >= chunk_bytes_) Flush();
  }

  std::string own_;  // the buffer with a sink; before out_, which may name it
  std::string& out_;
  const Sink sink_;
  const size_t chunk_bytes_ = 0;
  bool ok_ = true;
};

}  // namespace wm::observability

#endif  // WM_SERVER_OBSERVABILITY_EXPOSITION_WRITER_H_
