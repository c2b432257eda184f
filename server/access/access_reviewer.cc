#include "server/access/access_reviewer.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "server/access/internal/post_review.h"
#include "server/common/json_path.h"
#include "server/common/user_text.h"

namespace wm::access {
namespace {

constexpr char kSubjectAccessReviewPath[] = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

// A length or a count, in four bytes.
void AppendCount(std::string& key, size_t count) {
  const uint32_t n = static_cast<uint32_t>(count);
  key.append(reinterpret_cast<const char*>(&n), sizeof(n));
}

// Length-prefixed, so that no two different requests share a key: no field
// can end early inside another.
void AppendField(std::string& key, absl::string_view field) {
  AppendCount(key, field.size());
  key.append(field.data(), field.size());
}

// The request itself (user names and attributes, no secret), not a digest of
// it: built on every call, so it should cost little (appends, no formatting).
std::string CacheKey(const Identity& who, const ResourceAttributes& what) {
  std::string key;
  key.reserve(256);
  AppendField(key, who.user);
  AppendField(key, who.uid);
  absl::InlinedVector<const std::string*, 4> groups;
  for (const std::string& group : who.groups) groups.push_back(&group);
  std::sort(groups.begin(), groups.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  AppendCount(key, groups.size());
  for (const std::string* group : groups) AppendField(key, *group);
  AppendCount(key, who.extra.size());
  for (const auto& [name, values] : who.extra) {
    AppendField(key, name);
    AppendCount(key, values.size());
    for (const std::string& value : values) AppendField(key, value);
  }
  for (const std::string* field :
       {&what.verb, &what.group, &what.resource, &what.namespace_, &what.name, &what.path}) {
    AppendField(key, *field);
  }
  return key;
}

}  // namespace

std::string ResourceAttributes::Describe() const {
  if (!path.empty()) return absl::StrCat(verb, " ", QuoteUserText(path));
  std::string out = absl::StrCat(verb, " ", resource, group.empty() ? "" : ".", group);
  if (!name.empty()) absl::StrAppend(&out, " ", QuoteUserText(name));
  absl::StrAppend(&out, namespace_.empty()
                            ? " in every namespace"
                            : absl::StrCat(" in namespace ", QuoteUserText(namespace_)));
  return out;
}

AccessReviewer::AccessReviewer(const kube::ApiClient& client, Options options)
    : client_(client),
      options_(std::move(options)),
      cache_(options_.cache_entries, options_.clock) {}

std::optional<Decision> AccessReviewer::Cached(const Identity& who,
                                               const ResourceAttributes& what) {
  return cache_.Get(CacheKey(who, what));
}

absl::StatusOr<Decision> AccessReviewer::Review(const Identity& who,
                                                const ResourceAttributes& what) {
  std::string key = CacheKey(who, what);
  if (std::optional<Decision> cached = cache_.Get(key)) return *std::move(cached);
  absl::StatusOr<Decision> decision = Ask(who, what);
  if (decision.ok()) {
    cache_.Put(key, *decision, decision->allowed ? options_.allowed_ttl : options_.denied_ttl);
  }
  return decision;
}

namespace {

absl::Status StatusOf(const Identity& who, const ResourceAttributes& what,
                      const Decision& decision) {
  if (decision.allowed) return absl::OkStatus();
  std::string message =
      absl::StrCat("user ", QuoteUserText(who.user), " may not ", what.Describe());
  if (!decision.reason.empty()) absl::StrAppend(&message, ": ", QuoteUserText(decision.reason));
  return absl::PermissionDeniedError(message);
}

}  // namespace

absl::Status AccessReviewer::Check(const Identity& who, const ResourceAttributes& what) {
  absl::StatusOr<Decision> decision = Review(who, what);
  if (!decision.ok()) return decision.status();
  return StatusOf(who, what, *decision);
}

std::optional<absl::Status> AccessReviewer::CheckCached(const Identity& who,
                                                        const ResourceAttributes& what) {
  std::optional<Decision> decision = Cached(who, what);
  if (!decision) return std::nullopt;
  return StatusOf(who, what, *decision);
}

absl::StatusOr<Decision> AccessReviewer::Ask(const Identity& who,
                                             const ResourceAttributes& what) const {
  Json spec = {{"user", who.user}, {"groups", who.groups}};
  if (!what.path.empty()) {
    spec["nonResourceAttributes"] = {{"verb", what.verb}, {"path", what.path}};
  } else {
    Json attributes = {{"verb", what.verb}, {"group", what.group}, {"resource", what.resource}};
    if (!what.namespace_.empty()) attributes["namespace"] = what.namespace_;
    if (!what.name.empty()) attributes["name"] = what.name;
    spec["resourceAttributes"] = attributes;
  }
  if (!who.uid.empty()) spec["uid"] = who.uid;
  if (!who.extra.empty()) spec["extra"] = who.extra;
  Json review = {
      {"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", spec}};
  absl::StatusOr<Json> answer = internal::PostReview(client_, kSubjectAccessReviewPath, review,
                                                     options_.request_timeout, "review access");
  if (!answer.ok()) return answer.status();
  Decision decision;
  const Json* allowed = Find(*answer, {"status", "allowed"});
  const Json* denied = Find(*answer, {"status", "denied"});
  decision.allowed = allowed != nullptr && allowed->is_boolean() && allowed->get<bool>() &&
                     !(denied != nullptr && denied->is_boolean() && denied->get<bool>());
  decision.reason = FindString(*answer, {"status", "reason"});
  return decision;
}

}  // namespace wm::access
