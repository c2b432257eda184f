#include "server/common/yaml_json.h"

#include <yaml-cpp/yaml.h>
#include <yaml.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/common/file.h"
#include "server/common/json_reader.h"

namespace wm {
namespace {

// Whether s[from..] is one or more characters `is` accepts.
bool AllOf(absl::string_view s, size_t from, bool (*is)(char)) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    if (!is(s[i])) return false;
  }
  return true;
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsOctal(char c) { return c >= '0' && c <= '7'; }
bool IsHexDigit(char c) { return absl::ascii_isxdigit(static_cast<unsigned char>(c)); }

// [-+]?[0-9]+
bool IsInteger(absl::string_view s) {
  return AllOf(s, !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0, IsDigit);
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsFloat(absl::string_view s) {
  size_t i = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  size_t digits = 0, fraction = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++fraction;
  }
  if (digits == 0 && fraction == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exponent = 0;
    while (i < s.size() && IsDigit(s[i])) ++i, ++exponent;
    if (exponent == 0) return false;
  }
  return i == s.size();
}

// Types a plain (unquoted, untagged) scalar by the YAML 1.2 core schema.
// Hand-written rather than std::regex: snapshots and manifests hold
// hundreds of thousands of scalars, and std::regex costs microseconds each.
// (A text is returned as `return s;`: C++20 moves a returned local into
// the Json it converts to.)
Json ResolvePlainScalar(std::string s) {
  // Only these begin a null, a boolean or a number; most scalars (names,
  // images, label values) are text at once.
  if (!s.empty() && !IsDigit(s[0]) && !absl::StrContains("~nNtTfF+-.", s[0])) {
    return s;
  }
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    return nullptr;
  }
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (IsInteger(s)) {
    int64_t v;
    if (absl::SimpleAtoi(s, &v)) return v;
    double d;
    if (absl::SimpleAtod(s, &d)) return d;
  }
  // 0o17 and 0x1F; ones too large for an int64 stay text.
  struct Radix {
    const char* prefix;
    int base;
    bool (*is)(char);
  };
  for (const Radix& radix : {Radix{"0o", 8, &IsOctal}, Radix{"0x", 16, &IsHexDigit}}) {
    const auto& [prefix, base, is] = radix;
    if (absl::StartsWith(s, prefix) && AllOf(s, 2, is)) {
      int64_t v = 0;
      auto result = std::from_chars(s.data() + 2, s.data() + s.size(), v, base);
      if (result.ec == std::errc() && result.ptr == s.data() + s.size()) return v;
      return s;
    }
  }
  if (IsFloat(s)) {
    double d;
    if (absl::SimpleAtod(s, &d)) return d;
  }
  // Everything else, infinities and NaN included (JSON has neither), is
  // the text it was.
  return s;
}

void Emit(YAML::Emitter& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        Emit(out, item);
      }
      out << YAML::EndMap;
      return;
    case Json::value_t::array:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& item : value) Emit(out, item);
      out << YAML::EndSeq;
      return;
    case Json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      // A string that would read back as another type must be quoted.
      if (!ResolvePlainScalar(s).is_string()) {
        out << YAML::DoubleQuoted << s;
      } else {
        out << s;
      }
      return;
    }
    case Json::value_t::null:
      out << YAML::Null;
      return;
    default:
      out << value.dump();
      return;
  }
}

// Builds Json from libyaml's events. libyaml parses without recursion; the
// builder keeps its own stack, bounds nesting, and counts the nodes of each
// document (aliases expanded) and the nodes aliases add in the whole
// stream, so neither deep nesting nor an alias bomb, in one document or
// spread over many, can exhaust the stack or memory. Nodes written out in
// the text need no stream bound: the text's size bounds them.
class YamlReader {
 public:
  static constexpr size_t kMaxDepth = kMaxJsonDepth;
  static constexpr size_t kMaxDocumentNodes = 1 << 20;
  static constexpr size_t kMaxStreamAliasNodes = 1 << 20;

  explicit YamlReader(absl::string_view text) : text_(text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text_.data()),
                                 text_.size());
  }
  ~YamlReader() { yaml_parser_delete(&parser_); }

  absl::StatusOr<std::vector<Json>> Read() {
    std::vector<Json> documents;
    for (;;) {
      yaml_event_t event;
      if (!yaml_parser_parse(&parser_, &event)) return ParserError();
      absl::Status status = Handle(event, documents);
      bool done = event.type == YAML_STREAM_END_EVENT;
      yaml_event_delete(&event);
      if (!status.ok()) return status;
      if (done) return documents;
    }
  }

 private:
  struct Frame {
    Json value;
    std::string anchor;
    std::optional<std::string> key;  // mappings: the key awaiting its value
    // Mappings: the members so far, in the document's order, sorted once
    // at the mapping's end (inserting each in place would cost a mapping of
    // n unsorted keys n^2 / 2 moves).
    Json::object_t::Container members;
  };

  absl::Status ParserError() {
    return absl::InvalidArgumentError(absl::StrCat(
        "YAML parse error at line ", parser_.problem_mark.line + 1, ", column ",
        parser_.problem_mark.column + 1, ": ", parser_.problem ? parser_.problem : "invalid YAML",
        parser_.context ? absl::StrCat(" ", parser_.context) : ""));
  }

  absl::Status Error(const yaml_event_t& event, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("YAML error at line ", event.start_mark.line + 1,
                                                   ", column ", event.start_mark.column + 1, ": ",
                                                   what));
  }

  static std::string Text(const yaml_char_t* s) {
    return s == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(s));
  }

  static size_t CountNodes(const Json& v) {
    size_t n = 1;
    if (v.is_structured()) {
      for (const auto& item : v) n += CountNodes(item);
    }
    return n;
  }

  // Places a finished node into its parent, or ends the document.
  absl::Status Place(const yaml_event_t& event, Json value, const std::string& anchor, size_t nodes,
                     std::vector<Json>& documents) {
    document_nodes_ += nodes;
    if (document_nodes_ > kMaxDocumentNodes) {
      return Error(event,
                   absl::StrCat("document ", documents.size() + 1, " is too large (more than ",
                                kMaxDocumentNodes, " nodes, aliases expanded)"));
    }
    if (!anchor.empty()) anchors_[anchor] = {value, CountNodes(value)};
    if (stack_.empty()) {
      document_ = std::move(value);
      has_document_ = true;
      return absl::OkStatus();
    }
    Frame& parent = stack_.back();
    if (parent.value.is_array()) {
      parent.value.push_back(std::move(value));
    } else if (!parent.key) {
      if (!value.is_string() && !value.is_number() && !value.is_boolean() && !value.is_null()) {
        return Error(event, "mapping keys must be scalars");
      }
      parent.key = value.is_string() ? std::move(value.get_ref<std::string&>())
                                     : (value.is_null() ? std::string("null") : value.dump());
    } else {
      // A repeated key keeps its last value, as JSON readers do (when the
      // mapping ends: AssignUnsorted).
      parent.members.emplace_back(std::move(*parent.key), std::move(value));
      parent.key.reset();
    }
    return absl::OkStatus();
  }

  absl::Status Handle(const yaml_event_t& event, std::vector<Json>& documents) {
    switch (event.type) {
      case YAML_DOCUMENT_START_EVENT:
        has_document_ = false;
        document_nodes_ = 0;
        anchors_.clear();
        return absl::OkStatus();
      case YAML_DOCUMENT_END_EVENT:
        if (has_document_ && !document_.is_null()) documents.push_back(std::move(document_));
        document_ = Json();
        return absl::OkStatus();
      case YAML_SCALAR_EVENT: {
        std::string value(reinterpret_cast<const char*>(event.data.scalar.value),
                          event.data.scalar.length);
        std::string tag = Text(event.data.scalar.tag);
        Json json;
        if (tag == "tag:yaml.org,2002:str" || event.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
          json = std::move(value);
        } else {
          json = ResolvePlainScalar(std::move(value));
          // As the JSON reader: a number past a double's range is an error,
          // not an infinity that later turns into null.
          if (json.is_number_float() && !std::isfinite(json.get<double>())) {
            return Error(
                event, absl::StrCat(
                           "number out of range: ",
                           absl::string_view(reinterpret_cast<const char*>(event.data.scalar.value),
                                             event.data.scalar.length)));
          }
        }
        return Place(event, std::move(json), Text(event.data.scalar.anchor), 1, documents);
      }
      case YAML_ALIAS_EVENT: {
        auto it = anchors_.find(Text(event.data.alias.anchor));
        if (it == anchors_.end()) return Error(event, "unknown alias");
        absl::Status placed = Place(event, it->second.first, "", it->second.second, documents);
        stream_alias_nodes_ += it->second.second;
        if (placed.ok() && stream_alias_nodes_ > kMaxStreamAliasNodes) {
          return Error(event, absl::StrCat("aliases in the stream expand to more than ",
                                           kMaxStreamAliasNodes, " nodes"));
        }
        return placed;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        if (stack_.size() >= kMaxDepth) {
          return Error(event, absl::StrCat("nesting deeper than ", kMaxDepth, " levels"));
        }
        bool sequence = event.type == YAML_SEQUENCE_START_EVENT;
        stack_.push_back(
            {sequence ? Json::array() : Json::object(),
             Text(sequence ? event.data.sequence_start.anchor : event.data.mapping_start.anchor),
             std::nullopt});
        return absl::OkStatus();
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        Frame frame = std::move(stack_.back());
        stack_.pop_back();
        if (frame.value.is_object()) {
          frame.value.get_ref<Json::object_t&>().AssignUnsorted(std::move(frame.members));
        }
        // Its children were counted as they were placed.
        return Place(event, std::move(frame.value), frame.anchor, 1, documents);
      }
      default:
        return absl::OkStatus();
    }
  }

  absl::string_view text_;
  yaml_parser_t parser_;
  std::vector<Frame> stack_;
  std::map<std::string, std::pair<Json, size_t>> anchors_;
  Json document_;
  bool has_document_ = false;
  size_t document_nodes_ = 0;
  size_t stream_alias_nodes_ = 0;
};

// Offset of the first byte that breaks UTF-8, or npos.
size_t InvalidUtf8At(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > text.size()) return i;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return i;
    }
    i += n;
  }
  return absl::string_view::npos;
}

}  // namespace

absl::StatusOr<std::vector<Json>> ParseYamlDocuments(absl::string_view text) {
  // Every string that enters the system is valid UTF-8, so every later
  // rendering of it (JSON, logs, RPC strings) is too.
  if (size_t at = InvalidUtf8At(text); at != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("input is not valid UTF-8 at byte ", at));
  }
  return YamlReader(text).Read();
}

absl::StatusOr<std::vector<Json>> ReadYamlFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return FileErrorAs(text.status(), "cannot read", path);
  auto documents = ParseYamlDocuments(*text);
  if (!documents.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", documents.status().message()));
  }
  return documents;
}

std::string ToYaml(const Json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  Emit(out, value);
  return std::string(out.c_str()) + "\n";
}

}  // namespace wm
