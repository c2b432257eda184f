#include "server/common/kube_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace wm {
namespace {

bool LowerAlnum(char c) { return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'z'); }

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, not checking the length.
bool NameSyntax(absl::string_view s) {
  if (s.empty() || !absl::ascii_isalnum(s.front()) || !absl::ascii_isalnum(s.back())) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, not checking the length.
bool Dns1123LabelSyntax(absl::string_view s) {
  if (s.empty() || !LowerAlnum(s.front()) || !LowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!LowerAlnum(c) && c != '-') return false;
  }
  return true;
}

constexpr char kNameSyntax[] =
    "alphanumeric characters, '-', '_' or '.', beginning and ending with an alphanumeric "
    "(regex [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)";
constexpr char kSubdomainSyntax[] =
    "must be a lowercase RFC 1123 subdomain: lowercase alphanumerics, '-' or '.', beginning and "
    "ending with an alphanumeric";

}  // namespace

std::string QualifiedNameProblem(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, '/');
  absl::string_view name = parts.back();
  if (parts.size() > 2) {
    return "must be a name with an optional DNS subdomain prefix and '/' (e.g. "
           "'example.com/MyName')";
  }
  if (parts.size() == 2) {
    absl::string_view prefix = parts.front();
    if (prefix.empty()) return "prefix part must be non-empty";
    if (std::string problem = Dns1123SubdomainProblem(prefix); !problem.empty()) {
      return absl::StrCat("prefix part ", problem);
    }
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > kMaxQualifiedNameLength) {
    return absl::StrCat("name part must be no more than ", kMaxQualifiedNameLength,
                        " characters (it has ", name.size(), ")");
  }
  if (!NameSyntax(name)) return absl::StrCat("name part must be ", kNameSyntax);
  return "";
}

std::string LabelValueProblem(absl::string_view text) {
  if (text.empty()) return "";
  if (text.size() > kMaxLabelValueLength) {
    return absl::StrCat("must be no more than ", kMaxLabelValueLength, " characters (it has ",
                        text.size(), ")");
  }
  if (!NameSyntax(text)) return absl::StrCat("must be empty or ", kNameSyntax);
  return "";
}

std::string Dns1123SubdomainProblem(absl::string_view text) {
  if (text.size() > kMaxDns1123SubdomainLength) {
    return absl::StrCat("must be no more than ", kMaxDns1123SubdomainLength, " characters (it has ",
                        text.size(), ")");
  }
  for (absl::string_view label : absl::StrSplit(text, '.')) {
    if (!Dns1123LabelSyntax(label)) return kSubdomainSyntax;
  }
  return "";
}

std::string Dns1123LabelProblem(absl::string_view text) {
  if (text.size() > kMaxDns1123LabelLength) {
    return absl::StrCat("must be no more than ", kMaxDns1123LabelLength, " characters (it has ",
                        text.size(), ")");
  }
  if (!Dns1123LabelSyntax(text)) {
    return "must be a lowercase RFC 1123 label: lowercase alphanumerics or '-', beginning and "
           "ending with an alphanumeric";
  }
  return "";
}

}  // namespace wm
