#include "server/common/json_reader.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/common/simdjson_tree.h"

namespace wm {
namespace {

// Texts up to this size are parsed with simdjson first (several times
// faster than nlohmann's parser; an inline ResolveWorkload's object is
// about 9 KB), by a parser each thread keeps. Its buffers grow to about
// 14 bytes per byte of the largest text it parsed, so the bound also
// bounds what each thread holds (under 1 MiB). Larger texts, and every
// text simdjson refuses, go to nlohmann's parser alone: it builds the same
// tree, and its errors name the byte.
constexpr size_t kFastPathMaxBytes = 64 << 10;

// The tree nlohmann's parser reads, built here rather than by its own DOM
// builder: that one inserts each member into its object as it comes, which
// in our sorted objects (internal::SortedObject) costs an object of n
// unsorted keys n^2 / 2 moves; here an object's members are gathered in
// the text's order and sorted once when it closes. Behind a depth count
// too: nlohmann's parser keeps its own stack, so the only recursion a deep
// document could cause is in what later walks the tree, and stopping here
// bounds all of it.
class BoundedDomBuilder {
 public:
  BoundedDomBuilder(Json& root, const JsonLimits& limits) : root_(root), limits_(limits) {}

  bool null() { return Place(nullptr); }
  bool boolean(bool value) { return Place(value); }
  bool number_integer(Json::number_integer_t value) { return Place(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return Place(value); }
  bool number_float(Json::number_float_t value, const Json::string_t& /*text*/) {
    return Place(value);
  }
  bool string(Json::string_t& value) { return Place(std::move(value)); }
  bool binary(Json::binary_t& /*value*/) { return false; }  // not in JSON text
  bool key(Json::string_t& value) {
    stack_.back().key = std::move(value);
    return true;
  }

  bool start_object(size_t /*size*/) { return Enter(Json::object()); }
  bool start_array(size_t /*size*/) { return Enter(Json::array()); }
  bool end_object() {
    Level level = std::move(stack_.back());
    stack_.pop_back();
    // A repeated key keeps its last value, as nlohmann's own builder does.
    level.value.get_ref<Json::object_t&>().AssignUnsorted(std::move(level.members));
    return Place(std::move(level.value));
  }
  bool end_array() {
    Json array = std::move(stack_.back().value);
    stack_.pop_back();
    return Place(std::move(array));
  }

  template <typename Exception>
  bool parse_error(size_t position, const std::string& token, const Exception& error) {
    // Offsets count from 0; nlohmann reports how many bytes it had read.
    size_t at = position == 0 ? 0 : position - 1;
    if (error.id == 406) {  // out_of_range.406: a number overflows a double
      // It read the whole number: report where the number starts.
      at = position >= token.size() ? position - token.size() : 0;
      error_ =
          absl::InvalidArgumentError(absl::StrCat("number out of range at byte ", at, ": ", token));
    } else {
      error_ = absl::InvalidArgumentError(
          absl::StrCat("invalid JSON at byte ", at, ": ", Reason(error.what())));
    }
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const absl::Status& error() const { return error_; }

 private:
  // An array or object being read, and what it holds so far.
  struct Level {
    Json value;
    Json::object_t::Container members;  // an object's, in the text's order
    std::string key;                    // an object's: the key of the next value
  };

  bool Enter(Json container) {
    if (stack_.size() >= limits_.max_depth) {
      too_deep_ = true;
      return false;
    }
    stack_.push_back({std::move(container), {}, {}});
    return true;
  }

  // A finished value goes into the array or object that holds it, or is
  // the document.
  bool Place(Json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
    } else if (Level& parent = stack_.back(); parent.value.is_array()) {
      parent.value.get_ref<Json::array_t&>().push_back(std::move(value));
    } else {
      parent.members.emplace_back(std::move(parent.key), std::move(value));
    }
    return true;
  }

  // "[json.exception.parse_error.101] parse error at line 1, column 5: R"
  // becomes R: the byte offset replaces the line and column.
  static std::string Reason(absl::string_view what) {
    if (size_t end = what.find("] "); end != absl::string_view::npos) what.remove_prefix(end + 2);
    if (what.rfind("parse error", 0) == 0) {
      if (size_t colon = what.find(": "); colon != absl::string_view::npos) {
        what.remove_prefix(colon + 2);
      }
    }
    return std::string(what);
  }

  Json& root_;
  const JsonLimits& limits_;
  std::vector<Level> stack_;
  bool too_deep_ = false;
  absl::Status error_;
};

// The offset of the bracket that opens level `depth` + 1. Runs only after
// the parser accepted every byte up to it, so strings are well formed.
size_t OffsetBeyondDepth(absl::string_view text, size_t depth) {
  size_t level = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++level > depth) return i;
    } else if (c == ']' || c == '}') {
      --level;
    }
  }
  return text.size();
}

}  // namespace

absl::StatusOr<Json> ParseJson(absl::string_view text, JsonLimits limits) {
  if (text.size() <= kFastPathMaxBytes) {
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element parsed;
    if (parser.parse(text.data(), text.size()).get(parsed) == simdjson::SUCCESS) {
      // Too deep: nlohmann's parser finds where, for the error.
      if (std::optional<Json> tree = JsonFromSimdjson(parsed, limits.max_depth)) {
        return *std::move(tree);
      }
    }
  }
  Json root;
  BoundedDomBuilder builder(root, limits);
  if (Json::sax_parse(text.begin(), text.end(), &builder)) return root;
  if (builder.too_deep()) {
    return absl::InvalidArgumentError(absl::StrCat("nesting deeper than ", limits.max_depth,
                                                   " levels at byte ",
                                                   OffsetBeyondDepth(text, limits.max_depth)));
  }
  if (!builder.error().ok()) return builder.error();
  return absl::InvalidArgumentError("invalid JSON");
}

}  // namespace wm
