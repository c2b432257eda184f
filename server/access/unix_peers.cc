#include "server/access/unix_peers.h"

#include <iterator>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wm::access {

absl::Status UnixPeerTable::Add(absl::string_view line) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("\"", line, "\": ", why,
                                                   " (expected uid:UID=USER[;GROUP...] or ",
                                                   "gid:GID=USER[;GROUP...])"));
  };
  std::vector<absl::string_view> sides = absl::StrSplit(line, absl::MaxSplits('=', 1));
  if (sides.size() != 2) return invalid("no '='");
  const absl::string_view key = absl::StripAsciiWhitespace(sides[0]);
  absl::string_view number = key;
  std::map<uint32_t, SharedIdentity>* table = nullptr;
  if (absl::ConsumePrefix(&number, "uid:")) {
    table = &by_uid_;
  } else if (absl::ConsumePrefix(&number, "gid:")) {
    table = &by_gid_;
  } else {
    return invalid("the key is neither uid:UID nor gid:GID");
  }
  uint32_t id = 0;
  if (number.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(number[0])) ||
      !absl::SimpleAtoi(number, &id)) {
    return invalid("the id is not a number from 0 to 4294967295");
  }
  if (table->count(id) > 0) return invalid(absl::StrCat(key, " is named twice"));
  std::vector<std::string> names;
  for (absl::string_view name : absl::StrSplit(sides[1], ';')) {
    name = absl::StripAsciiWhitespace(name);
    if (name.empty()) return invalid("an empty user or group name");
    names.emplace_back(name);
  }
  Identity identity;
  identity.user = std::move(names.front());  // StrSplit yields at least one
  identity.groups.assign(std::make_move_iterator(names.begin() + 1),
                         std::make_move_iterator(names.end()));
  (*table)[id] = std::make_shared<const Identity>(std::move(identity));
  return absl::OkStatus();
}

std::optional<SharedIdentity> UnixPeerTable::Find(uint32_t uid, uint32_t gid) const {
  if (auto it = by_uid_.find(uid); it != by_uid_.end()) return it->second;
  if (auto it = by_gid_.find(gid); it != by_gid_.end()) return it->second;
  return std::nullopt;
}

absl::Status CheckUnixPeerIdentity(absl::string_view line) { return UnixPeerTable().Add(line); }

}  // namespace wm::access
