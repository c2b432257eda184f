#include "server/definitions/schema_lint.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/definitions/validate.h"
#include "server/expressions/jq_scanner.h"

namespace wm::definitions {
namespace {

using expressions::JqToken;
using Kind = JqToken::Kind;
using Context = std::optional<ReadPath>;  // nullopt: input unknown

// Functions whose (single) argument runs on each element of the input.
const absl::flat_hash_set<std::string>& ElementFunctions() {
  static const auto* names = new absl::flat_hash_set<std::string>{
      "map", "map_values", "sort_by", "group_by", "unique_by", "min_by", "max_by", "any", "all"};
  return *names;
}

// Functions whose arguments run on an input we cannot name.
const absl::flat_hash_set<std::string>& OpaqueFunctions() {
  static const auto* names =
      new absl::flat_hash_set<std::string>{"with_entries", "walk", "recurse", "env", "input"};
  return *names;
}

Context Extend(const Context& c, const ReadPath& steps) {
  if (!c) return std::nullopt;
  ReadPath p = *c;
  p.insert(p.end(), steps.begin(), steps.end());
  return p;
}

// A small recursive reader over jq tokens. It does not validate: the
// compiler has already accepted the expression.
class Reader {
 public:
  Reader(const std::vector<JqToken>& tokens, std::vector<ReadPath>& out) : t_(tokens), out_(out) {}

  void ReadAll() {
    while (pos_ < t_.size()) {
      Pipe(ReadPath{}, false);
      if (pos_ < t_.size()) ++pos_;  // skip a stray closer
    }
  }

 private:
  bool AtOp(const char* op) const {
    return pos_ < t_.size() && t_[pos_].kind == Kind::kOperator && t_[pos_].text == op;
  }
  bool AtWord(const char* word) const {
    return pos_ < t_.size() && t_[pos_].kind == Kind::kIdentifier && t_[pos_].text == word;
  }
  bool AtCloser(bool stop_at_comma) const {
    if (pos_ >= t_.size()) return true;
    const JqToken& k = t_[pos_];
    if (k.kind == Kind::kOperator) {
      return k.text == ")" || k.text == "]" || k.text == "}" || k.text == ";" ||
             (stop_at_comma && (k.text == "," || k.text == ":"));
    }
    return k.kind == Kind::kIdentifier &&
           (k.text == "then" || k.text == "elif" || k.text == "else" || k.text == "end" ||
            k.text == "as" || k.text == "catch");
  }

  void Record(const Context& path) {
    if (path && !path->empty()) out_.push_back(*path);
  }

  // expr ('|' expr)*; returns the path the whole pipe yields, if a chain.
  Context Pipe(Context in, bool stop_at_comma) {
    Context result = Segment(in, stop_at_comma);
    while (AtOp("|")) {
      ++pos_;
      result = Segment(result, stop_at_comma);
    }
    return result;
  }

  // Terms joined by operators, up to '|' or a closer.
  Context Segment(Context in, bool stop_at_comma) {
    Context first;
    bool simple = true;
    int terms = 0;
    while (!AtCloser(stop_at_comma) && !AtOp("|")) {
      if (AtWord("as")) break;
      if (AtWord("and") || AtWord("or")) {
        // Boolean operators are words to the scanner; both sides read `in`.
        simple = false;
        ++pos_;
        continue;
      }
      if (t_[pos_].kind == Kind::kOperator && t_[pos_].text != "(" && t_[pos_].text != "[" &&
          t_[pos_].text != "{" && t_[pos_].text != "." && t_[pos_].text != "..") {
        // A binary operator: only `//` keeps the first term as the result.
        if (t_[pos_].text != "//" && t_[pos_].text != "?") simple = false;
        ++pos_;
        continue;
      }
      Context term = Term(in);
      if (terms++ == 0) first = term;
    }
    if (AtWord("as")) {
      // `X as $v | body`: the body reads the same input as X.
      ++pos_;
      SkipPattern();
      if (AtOp("|")) {
        ++pos_;
        return Pipe(in, stop_at_comma);
      }
      return std::nullopt;
    }
    return simple && terms >= 1 ? first : std::nullopt;
  }

  void SkipPattern() {
    int depth = 0;
    while (pos_ < t_.size()) {
      const JqToken& k = t_[pos_];
      if (k.kind == Kind::kOperator && (k.text == "[" || k.text == "{")) ++depth;
      if (k.kind == Kind::kOperator && (k.text == "]" || k.text == "}")) --depth;
      if (depth == 0 && k.kind == Kind::kOperator && k.text == "|") return;
      if (depth == 0 && k.kind == Kind::kOperator && k.text == "(") return;
      ++pos_;
    }
  }

  // Postfix steps after a term: .x, ."x", [], ["x"], [n], ?. A computed
  // index (`.a[(expr)]`) runs on the term's input, `in`.
  Context Postfix(Context path, const Context& in) {
    for (;;) {
      if (pos_ >= t_.size()) return path;
      const JqToken& k = t_[pos_];
      if (k.kind == Kind::kField) {
        path = Extend(path, {k.text.substr(1)});
        ++pos_;
      } else if (AtOp(".") && pos_ + 1 < t_.size() && t_[pos_ + 1].kind == Kind::kString) {
        path = Extend(path, {Unquote(t_[pos_ + 1].text)});
        pos_ += 2;
      } else if (AtOp("[")) {
        ++pos_;
        if (AtOp("]")) {
          path = Extend(path, {"[]"});
          ++pos_;
        } else if (pos_ + 1 < t_.size() && t_[pos_ + 1].kind == Kind::kOperator &&
                   t_[pos_ + 1].text == "]" &&
                   (t_[pos_].kind == Kind::kString || t_[pos_].kind == Kind::kNumber)) {
          path = Extend(path, {t_[pos_].kind == Kind::kString ? Unquote(t_[pos_].text) : "[]"});
          pos_ += 2;
        } else {
          Pipe(in, false);  // a computed index: read what it reads
          if (AtOp("]")) ++pos_;
          path = Extend(path, {"[]"});
        }
      } else if (AtOp("?")) {
        ++pos_;
      } else {
        return path;
      }
    }
  }

  // Number of `;`-separated arguments from here to the matching `)`.
  int CountArgs() const {
    int depth = 0, args = 1;
    for (size_t i = pos_; i < t_.size(); ++i) {
      const JqToken& k = t_[i];
      if (k.kind != Kind::kOperator) continue;
      if (k.text == "(" || k.text == "[" || k.text == "{") ++depth;
      if (k.text == ")" || k.text == "]" || k.text == "}") {
        if (depth == 0) return args;
        --depth;
      }
      if (k.text == ";" && depth == 0) ++args;
    }
    return args;
  }

  static std::string Unquote(const std::string& s) {
    Json v = Json::parse(s, nullptr, false);
    return v.is_string() ? v.get<std::string>() : s;
  }

  Context Term(Context in) {
    const JqToken& k = t_[pos_];
    if (k.kind == Kind::kField) {
      Context path = Postfix(in, in);
      Record(path);
      return path;
    }
    if (k.kind == Kind::kOperator && k.text == ".") {
      // `."x"` is a field; a lone `.` is the input itself.
      if (!(pos_ + 1 < t_.size() && t_[pos_ + 1].kind == Kind::kString)) ++pos_;
      Context path = Postfix(in, in);
      Record(path);
      return path;
    }
    if (k.kind == Kind::kOperator && k.text == "(") {
      ++pos_;
      Context inner = Pipe(in, false);
      if (AtOp(")")) ++pos_;
      Context path = Postfix(inner, in);
      Record(path);
      return path;
    }
    if (k.kind == Kind::kOperator && k.text == "[") {
      ++pos_;
      if (!AtOp("]")) Pipe(in, false);
      if (AtOp("]")) ++pos_;
      Postfix(std::nullopt, in);
      return std::nullopt;
    }
    if (k.kind == Kind::kOperator && k.text == "{") {
      ++pos_;
      Object(in);
      Postfix(std::nullopt, in);
      return std::nullopt;
    }
    if (k.kind == Kind::kVariable || k.kind == Kind::kString || k.kind == Kind::kNumber ||
        k.kind == Kind::kFormat) {
      ++pos_;
      Postfix(std::nullopt, in);
      return std::nullopt;
    }
    if (k.kind == Kind::kIdentifier) return Word(in);
    ++pos_;  // anything else (.., stray operators)
    return std::nullopt;
  }

  void Object(Context in) {
    while (pos_ < t_.size() && !AtOp("}")) {
      const JqToken& key = t_[pos_];
      if (key.kind == Kind::kIdentifier && pos_ + 1 < t_.size() &&
          (t_[pos_ + 1].text == "," || t_[pos_ + 1].text == "}")) {
        Record(Extend(in, {key.text}));  // {name} is {name: .name}
        ++pos_;
      } else if (key.kind == Kind::kOperator && key.text == "(") {
        ++pos_;
        Pipe(in, false);
        if (AtOp(")")) ++pos_;
      } else {
        ++pos_;  // identifier, string or variable key
      }
      if (AtOp(":")) {
        ++pos_;
        Pipe(in, true);
      }
      if (AtOp(",")) ++pos_;
    }
    if (AtOp("}")) ++pos_;
  }

  Context Word(Context in) {
    std::string word = t_[pos_].text;
    ++pos_;
    if (word == "if") {
      for (;;) {
        Pipe(in, false);  // condition
        if (AtWord("then")) ++pos_;
        Pipe(in, false);
        if (AtWord("elif")) {
          ++pos_;
          continue;
        }
        if (AtWord("else")) {
          ++pos_;
          Pipe(in, false);
        }
        if (AtWord("end")) ++pos_;
        break;
      }
      Postfix(std::nullopt, in);
      return std::nullopt;
    }
    if (word == "reduce" || word == "foreach") {
      Pipe(in, false);  // source, up to `as`
      if (AtWord("as")) {
        ++pos_;
        SkipPattern();
      }
      if (AtOp("(")) {
        ++pos_;
        Pipe(in, false);  // init
        while (AtOp(";")) {
          ++pos_;
          Pipe(std::nullopt, false);  // update, extract: on the accumulator
        }
        if (AtOp(")")) ++pos_;
      }
      return std::nullopt;
    }
    if (word == "def") {
      while (pos_ < t_.size() && !AtOp(":")) ++pos_;
      if (AtOp(":")) ++pos_;
      Pipe(std::nullopt, false);  // body: input unknown
      if (AtOp(";")) ++pos_;
      return Pipe(in, false);
    }
    if (word == "try") {
      Context body = Term(in);
      if (AtWord("catch")) {
        ++pos_;
        Term(std::nullopt);
      }
      return body;
    }
    if (word == "label") {
      if (pos_ < t_.size()) ++pos_;  // $name
      return std::nullopt;
    }
    if (AtOp("(")) {
      ++pos_;
      int args = CountArgs();
      for (int arg = 0;; ++arg) {
        Context arg_in = in;
        if (OpaqueFunctions().contains(word)) {
          arg_in = std::nullopt;
        } else if (ElementFunctions().contains(word)) {
          // f(x) runs x on each element; any(gen; cond) and all(gen; cond)
          // run gen on the input and cond on gen's outputs.
          bool generator_form = (word == "any" || word == "all") && args == 2;
          if (arg == 0) {
            arg_in = generator_form ? in : Extend(in, {"[]"});
          } else {
            arg_in = std::nullopt;
          }
        }
        Pipe(arg_in, false);
        if (!AtOp(";")) break;
        ++pos_;
      }
      if (AtOp(")")) ++pos_;
    }
    Postfix(std::nullopt, in);
    return std::nullopt;
  }

  const std::vector<JqToken>& t_;
  std::vector<ReadPath>& out_;
  size_t pos_ = 0;
};

// ObjectMeta fields a definition may read.
bool IsObjectMetaField(const std::string& field) {
  static const std::set<std::string> kFields = {"name",
                                                "namespace",
                                                "uid",
                                                "labels",
                                                "annotations",
                                                "generation",
                                                "ownerReferences",
                                                "creationTimestamp",
                                                "deletionTimestamp",
                                                "resourceVersion",
                                                "finalizers",
                                                "generateName"};
  return kFields.contains(field);
}

// Empty when the schema has the path; else the first step it lacks.
std::string MissingStep(const Json& schema, const ReadPath& path) {
  if (!path.empty() && path[0] == "metadata") {
    if (path.size() > 1 && !IsObjectMetaField(path[1])) return path[1];
    return "";
  }
  if (!path.empty() && (path[0] == "apiVersion" || path[0] == "kind")) return "";
  const Json* node = &schema;
  for (const std::string& step : path) {
    if (node->value("x-kubernetes-preserve-unknown-fields", false)) return "";
    auto additional = node->find("additionalProperties");
    if (additional != node->end() && additional->is_boolean() && additional->get<bool>()) return "";
    if (step == "[]") {
      if (auto items = node->find("items"); items != node->end()) {
        node = &*items;
      } else if (additional != node->end() && additional->is_object()) {
        node = &*additional;
      } else if (!node->contains("properties") && !node->contains("type")) {
        return "";  // free-form
      } else {
        return step;
      }
      continue;
    }
    auto properties = node->find("properties");
    if (properties != node->end() && properties->contains(step)) {
      node = &(*properties)[step];
    } else if (additional != node->end() && additional->is_object()) {
      node = &*additional;
    } else if (properties == node->end() && node->value("type", "") == "object") {
      return "";  // an object without a declared shape
    } else {
      return step;
    }
  }
  return "";
}

std::string Render(const ReadPath& path) {
  std::string out;
  for (const auto& step : path) out += step == "[]" ? "[]" : "." + step;
  return out;
}

}  // namespace

std::vector<ReadPath> ReadPaths(absl::string_view expression) {
  std::vector<ReadPath> out;
  auto tokens = expressions::ScanJq(expression);
  if (!tokens.ok()) return out;
  Reader(*tokens, out).ReadAll();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Finding> LintAgainstSchema(const Definition& def, const Json& schema) {
  std::vector<Finding> findings;
  ForEachExpression(def, [&](const std::string& field, const std::string& expression) {
    // Pod selectors and gang keys read the pod, not the workload.
    if (field.find(".podSelector.") != std::string::npos ||
        field.find("gangScheduling.") != std::string::npos) {
      return;
    }
    std::set<std::string> reported;
    for (const ReadPath& path : ReadPaths(expression)) {
      std::string missing = MissingStep(schema, path);
      if (missing.empty() || !reported.insert(Render(path)).second) continue;
      findings.push_back(
          {Finding::Severity::kError, field,
           absl::StrCat("reads ", Render(path), ", but the ", def.root.kind->kind, " schema (",
                        def.root.kind->version, ") has no field \"", missing, "\" there")});
    }
  });
  return findings;
}

}  // namespace wm::definitions
