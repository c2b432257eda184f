#ifndef WM_SERVER_COMMON_INTERNAL_SORTED_OBJECT_H_
#define WM_SERVER_COMMON_INTERNAL_SORTED_OBJECT_H_

// The members of a JSON object as nlohmann::basic_json holds them (its
// ObjectType): one vector of (key, value) pairs sorted by key, instead of
// std::map's tree of separately allocated nodes. Only server/common/json.h
// names it; every other layer sees it as Json::object_t.
//
// Why: a resolution mostly looks members up by name (`.spec.replicas`, a
// pod's labels) in objects of a few to a few dozen members, and copies and
// frees whole documents. In a tree each lookup follows a pointer per level
// and compares whole keys on the way down; here it is a scan of one
// contiguous block that compares a key's bytes only when its length
// matches (a search by halves for large objects), and an object is one
// allocation instead of one per member.
//
// Semantics are std::map's where callers can see them: keys unique and
// iterated in ascending byte order (which is also gojq's order), a repeated
// key keeps the first member (emplace) or replaces its value
// (insert_or_assign, operator[]). What differs: inserting or erasing a
// member invalidates iterators and references to the other members, as in
// any vector. REQUIRES: callers hold no reference into an object across an
// insertion into that same object.
//
// Building an object member by member costs O(1) per member when keys come
// in ascending order (Go's encoder writes maps that way, the apiserver's
// structs mostly so), O(n) otherwise; a parser of untrusted input with
// many members uses AssignUnsorted, which sorts once.

#include <algorithm>
#include <compare>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace wm::internal {

template <class Key, class T, class IgnoredCompare = std::less<>,
          class Allocator = std::allocator<std::pair<const Key, T>>>
class SortedObject {
 public:
  using key_type = Key;
  using mapped_type = T;
  // Not pair<const Key, T>: members move when others are inserted before
  // them. Callers must not change a key in place.
  using value_type = std::pair<Key, T>;
  // Transparent, so that nlohmann and FindMember look up string_views
  // without making a Key.
  using key_compare = std::less<>;
  using allocator_type =
      typename std::allocator_traits<Allocator>::template rebind_alloc<value_type>;
  using Container = std::vector<value_type, allocator_type>;
  using iterator = typename Container::iterator;
  using const_iterator = typename Container::const_iterator;
  using reverse_iterator = typename Container::reverse_iterator;
  using const_reverse_iterator = typename Container::const_reverse_iterator;
  using size_type = typename Container::size_type;
  using difference_type = typename Container::difference_type;
  using reference = value_type&;
  using const_reference = const value_type&;

  SortedObject() = default;
  explicit SortedObject(const allocator_type& allocator) : members_(allocator) {}
  template <class InputIt>
  SortedObject(InputIt first, InputIt last, const allocator_type& allocator = allocator_type())
      : members_(allocator) {
    insert(first, last);
  }
  SortedObject(std::initializer_list<value_type> init,
               const allocator_type& allocator = allocator_type())
      : members_(allocator) {
    insert(init.begin(), init.end());
  }

  iterator begin() noexcept { return members_.begin(); }
  const_iterator begin() const noexcept { return members_.begin(); }
  const_iterator cbegin() const noexcept { return members_.cbegin(); }
  iterator end() noexcept { return members_.end(); }
  const_iterator end() const noexcept { return members_.end(); }
  const_iterator cend() const noexcept { return members_.cend(); }
  reverse_iterator rbegin() noexcept { return members_.rbegin(); }
  const_reverse_iterator rbegin() const noexcept { return members_.rbegin(); }
  reverse_iterator rend() noexcept { return members_.rend(); }
  const_reverse_iterator rend() const noexcept { return members_.rend(); }

  bool empty() const noexcept { return members_.empty(); }
  size_type size() const noexcept { return members_.size(); }
  size_type max_size() const noexcept { return members_.max_size(); }
  size_type capacity() const noexcept { return members_.capacity(); }
  void clear() noexcept { members_.clear(); }
  void swap(SortedObject& other) noexcept { members_.swap(other.members_); }

  template <class K>
  iterator find(const K& key) {
    return begin() + (FindIndex(key));
  }
  template <class K>
  const_iterator find(const K& key) const {
    return begin() + (FindIndex(key));
  }
  template <class K>
  size_type count(const K& key) const {
    return FindIndex(key) == members_.size() ? 0 : 1;
  }
  template <class K>
  bool contains(const K& key) const {
    return count(key) != 0;
  }

  template <class K>
  T& at(const K& key) {
    const size_t i = FindIndex(key);
    if (i == members_.size()) throw std::out_of_range("key not found");
    return members_[i].second;
  }
  template <class K>
  const T& at(const K& key) const {
    const size_t i = FindIndex(key);
    if (i == members_.size()) throw std::out_of_range("key not found");
    return members_[i].second;
  }

  // The member `key`, made with a default value if there is none.
  template <class K>
  T& operator[](K&& key) {
    return try_emplace(std::forward<K>(key)).first->second;
  }

  // Adds (key, T(args...)) unless `key` is a member; returns the member and
  // whether it was added.
  template <class K, class... Args>
  std::pair<iterator, bool> try_emplace(K&& key, Args&&... args) {
    const size_t i = InsertionPoint(key);
    if (i < members_.size() && KeyView(members_[i].first) == KeyView(key)) {
      return {begin() + i, false};
    }
    auto it = members_.emplace(begin() + i, std::piecewise_construct,
                               std::forward_as_tuple(std::forward<K>(key)),
                               std::forward_as_tuple(std::forward<Args>(args)...));
    return {it, true};
  }
  template <class K, class V>
  std::pair<iterator, bool> emplace(K&& key, V&& value) {
    return try_emplace(std::forward<K>(key), std::forward<V>(value));
  }
  // The hint is not needed: appending in order is already the fast case.
  template <class K, class V>
  iterator emplace_hint(const_iterator /*hint*/, K&& key, V&& value) {
    return try_emplace(std::forward<K>(key), std::forward<V>(value)).first;
  }
  std::pair<iterator, bool> insert(value_type&& member) {
    return try_emplace(std::move(member.first), std::move(member.second));
  }
  std::pair<iterator, bool> insert(const value_type& member) {
    return try_emplace(member.first, member.second);
  }
  template <class InputIt>
  void insert(InputIt first, InputIt last) {
    for (; first != last; ++first) try_emplace(first->first, first->second);
  }
  template <class K, class V>
  std::pair<iterator, bool> insert_or_assign(K&& key, V&& value) {
    auto [it, added] = try_emplace(std::forward<K>(key), std::forward<V>(value));
    if (!added) it->second = std::forward<V>(value);
    return {it, added};
  }

  // Replaces the members with `members` in any order, sorted once
  // (O(n log n), O(n) when already in order); of a repeated key the last
  // value is kept, as a parser that assigns member by member would keep.
  void AssignUnsorted(Container members) {
    const auto not_ascending = [](const value_type& a, const value_type& b) {
      return !(KeyView(a.first) < KeyView(b.first));
    };
    if (std::adjacent_find(members.begin(), members.end(), not_ascending) != members.end()) {
      std::stable_sort(members.begin(), members.end(),
                       [](const value_type& a, const value_type& b) {
                         return KeyView(a.first) < KeyView(b.first);
                       });
      // Keep the last of each run of equal keys.
      auto out = members.begin();
      for (auto in = members.begin(); in != members.end();) {
        auto run_end = in + 1;
        while (run_end != members.end() && run_end->first == in->first) ++run_end;
        if (out != run_end - 1) *out = std::move(*(run_end - 1));
        ++out;
        in = run_end;
      }
      members.erase(out, members.end());
    }
    members_ = std::move(members);
  }

  // The members of `a` and `b` in one object, in O(n + m): a key only one
  // has keeps its value; for a key both have, the value is a's, then
  // `combine(value, b's value)` (for jq's `+`, b's value replaces it).
  template <class Combine>
  static SortedObject Merged(const SortedObject& a, const SortedObject& b, Combine combine) {
    SortedObject out;
    out.members_.reserve(a.size() + b.size());
    auto i = a.begin();
    auto j = b.begin();
    while (i != a.end() && j != b.end()) {
      if (KeyView(i->first) < KeyView(j->first)) {
        out.members_.push_back(*i++);
      } else if (KeyView(j->first) < KeyView(i->first)) {
        out.members_.push_back(*j++);
      } else {
        out.members_.push_back(*i++);
        combine(out.members_.back().second, j->second);
        ++j;
      }
    }
    out.members_.insert(out.members_.end(), i, a.end());
    out.members_.insert(out.members_.end(), j, b.end());
    return out;
  }

  template <class K>
  size_type erase(const K& key) requires(!std::is_convertible_v<const K&, const_iterator>) {
    const size_t i = FindIndex(key);
    if (i == members_.size()) return 0;
    members_.erase(begin() + i);
    return 1;
  }
  iterator erase(const_iterator position) { return members_.erase(position); }
  iterator erase(iterator position) { return members_.erase(position); }
  iterator erase(const_iterator first, const_iterator last) { return members_.erase(first, last); }

  friend bool operator==(const SortedObject& a, const SortedObject& b) {
    return a.members_ == b.members_;
  }
  // std::map's order: the members compared in turn, lexicographically.
  friend auto operator<=>(const SortedObject& a, const SortedObject& b) {
    return a.members_ <=> b.members_;
  }

 private:
  // Objects this small are scanned: comparing lengths first rejects most
  // members without reading their bytes.
  static constexpr size_t kScanned = 16;

  // Any string type's bytes (std::string, a literal, absl::string_view,
  // which may be a type of its own).
  template <class K>
  static std::string_view KeyView(const K& key) {
    if constexpr (std::is_convertible_v<const K&, std::string_view>) {
      return key;
    } else {
      return std::string_view(key.data(), key.size());
    }
  }

  // Whether the `n` bytes at `a` and `b` are equal. Most keys are short
  // ("name", "spec", a label's name): up to 16 bytes they are compared as
  // two overlapping words each, without a call to memcmp (which a lookup
  // would otherwise make for every key of the wanted length).
  static bool SameBytes(const char* a, const char* b, size_t n) {
    if (n > 16) return std::memcmp(a, b, n) == 0;
    if (n >= 8) {
      return Word<uint64_t>(a) == Word<uint64_t>(b) &&
             Word<uint64_t>(a + n - 8) == Word<uint64_t>(b + n - 8);
    }
    if (n >= 4) {
      return Word<uint32_t>(a) == Word<uint32_t>(b) &&
             Word<uint32_t>(a + n - 4) == Word<uint32_t>(b + n - 4);
    }
    // 0 to 3 bytes: the first, middle and last cover them all.
    return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
  }
  template <class W>
  static W Word(const char* p) {
    W w;
    std::memcpy(&w, p, sizeof(w));
    return w;
  }

  template <class K>
  size_t FindIndex(const K& key) const {
    const std::string_view wanted = KeyView(key);
    const size_t n = members_.size();
    if (n <= kScanned) {
      for (size_t i = 0; i < n; ++i) {
        const Key& k = members_[i].first;
        if (k.size() == wanted.size() && SameBytes(k.data(), wanted.data(), wanted.size())) {
          return i;
        }
      }
      return n;
    }
    const size_t i = LowerBound(wanted);
    return i < n && KeyView(members_[i].first) == wanted ? i : n;
  }

  template <class K>
  size_t LowerBound(const K& key) const {
    const std::string_view wanted = KeyView(key);
    auto it = std::lower_bound(
        members_.begin(), members_.end(), wanted,
        [](const value_type& member, std::string_view k) { return KeyView(member.first) < k; });
    return it - members_.begin();
  }

  // Where `key` belongs: the end when it sorts after every member (the
  // common case while an object is built), else its lower bound.
  template <class K>
  size_t InsertionPoint(const K& key) const {
    const std::string_view wanted = KeyView(key);
    if (members_.empty() || KeyView(members_.back().first) < wanted) return members_.size();
    return LowerBound(wanted);
  }

  Container members_;
};

}  // namespace wm::internal

#endif  // WM_SERVER_COMMON_INTERNAL_SORTED_OBJECT_H_
