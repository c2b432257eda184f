#ifndef WM_SERVER_EXPRESSIONS_NATIVE_VALUE_H_
#define WM_SERVER_EXPRESSIONS_NATIVE_VALUE_H_

// A jq value during evaluation: a read-only view of a Json that either
// belongs to someone who outlives the evaluation (the loaded input, a
// literal of the program) or is shared by the values that point into it.
//
// Why: an evaluation mostly walks into its input (`.spec.replicas`,
// `.status.conditions[]`) and compares what it finds. Borrowing makes those
// steps free of copies and allocations; only values the program computes
// (sums, arrays it builds, strings it joins) are allocated, once, and every
// value taken out of them (`[.a, .b][0]`) shares the allocation.

#include <memory>
#include <new>
#include <utility>

#include "server/common/json.h"

namespace wm::expressions::native {

namespace internal {
// null, true and false, which every Value of them views. Namespace-scope
// constants rather than function-local statics: a Value is made for almost
// every step of an evaluation, and a function-local static costs a guard
// check each time. No Value is made during static initialization, so these
// are initialized before any Value views them.
inline const Json kNull(nullptr);
inline const Json kTrue(true);
inline const Json kFalse(false);
}  // namespace internal

class Value {
 public:
  // null.
  Value() : json_(&NullJson()) {}

  // A view of `json`. REQUIRES: `json` outlives every copy of the value.
  static Value Borrowed(const Json& json) { return Value(&json, nullptr); }

  // A value that owns `json` (shared by its copies and its members).
  // Numbers, booleans and null are held inline: most values an evaluation
  // computes are counts and sums, and sharing them would cost an
  // allocation each.
  static Value Owned(Json json) {
    if (json.is_number()) {
      Value v;
      v.SetScalar(json);
      return v;
    }
    if (json.is_boolean()) return Bool(*json.get_ptr<const Json::boolean_t*>());
    if (json.is_null()) return Null();
    auto owner = std::make_shared<const Json>(std::move(json));
    const Json* pointer = owner.get();
    return Value(pointer, std::move(owner));
  }

  // Copies keep their own inline scalar; a moved-from value keeps its
  // scalar too, so a reference taken into it stays good while it lives.
  Value(const Value& other) { CopyFrom(other); }
  Value(Value&& other) noexcept { MoveFrom(std::move(other)); }
  Value& operator=(const Value& other) {
    if (this != &other) CopyFrom(other);
    return *this;
  }
  Value& operator=(Value&& other) noexcept {
    if (this != &other) MoveFrom(std::move(other));
    return *this;
  }

  // A computed integer (a count), held inline as Owned holds numbers.
  static Value Integer(int64_t n) {
    Value v;
    new (&v.scalar_.json) Json(n);
    v.json_ = &v.scalar_.json;
    return v;
  }

  static Value Bool(bool b) { return Borrowed(b ? TrueJson() : FalseJson()); }
  static Value Null() { return Value(); }

  // A view of `member`, a part of this value (an element, a field), that
  // keeps this value's allocation alive. REQUIRES: `member` is inside *this.
  Value Member(const Json& member) const { return Value(&member, owner_); }

  // *this = `member` of `parent` (parent.Member(*member)), or null when
  // `member` is null; without a temporary Value. REQUIRES: as Member's.
  void AssignMember(const Value& parent, const Json* member) {
    if (member == nullptr) {
      json_ = &NullJson();
      owner_.reset();
      return;
    }
    json_ = member;
    owner_ = parent.owner_;
  }

  const Json& json() const { return *json_; }
  // The computed document this value lies in, or null for a borrowed or an
  // inline value: lets a caller keep the value alive past the evaluation.
  const std::shared_ptr<const Json>& owner() const { return owner_; }
  // Whether the value is a view of a document someone else owns (the
  // input, a literal), as opposed to one the evaluation computed.
  bool borrowed() const { return owner_ == nullptr && !Inline(); }
  const Json& operator*() const { return *json_; }
  const Json* operator->() const { return json_; }

  // Whether this value is the only holder of an allocation it owns, so a
  // caller holding the last copy may move the Json out instead of copying.
  bool Unique() const {
    return owner_ != nullptr && owner_.use_count() == 1 && owner_.get() == json_;
  }

  // The Json, moved out when this is the last owner, copied otherwise.
  Json Take() && {
    if (Unique()) {
      Json out = std::move(const_cast<Json&>(*json_));
      owner_.reset();
      json_ = &NullJson();
      return out;
    }
    return *json_;
  }

 private:
  Value(const Json* json, std::shared_ptr<const Json> owner)
      : json_(json), owner_(std::move(owner)) {}

  bool Inline() const { return json_ == &scalar_.json; }
  // REQUIRES: `number` is a number. Made from the number itself, not by
  // Json's copy constructor (an out-of-line call for any type): every copy
  // and move of a computed number comes here.
  void SetScalar(const Json& number) {
    switch (number.type()) {
      case Json::value_t::number_unsigned:
        new (&scalar_.json) Json(*number.get_ptr<const Json::number_unsigned_t*>());
        break;
      case Json::value_t::number_float:
        new (&scalar_.json) Json(*number.get_ptr<const Json::number_float_t*>());
        break;
      default:
        new (&scalar_.json) Json(*number.get_ptr<const Json::number_integer_t*>());
    }
    json_ = &scalar_.json;
  }
  void CopyFrom(const Value& other) {
    if (other.Inline()) {
      SetScalar(other.scalar_.json);
      owner_.reset();
    } else {
      json_ = other.json_;
      owner_ = other.owner_;
    }
  }
  void MoveFrom(Value&& other) {
    if (other.Inline()) {
      SetScalar(other.scalar_.json);  // a number: copying is moving
      owner_.reset();
    } else {
      json_ = other.json_;
      owner_ = std::move(other.owner_);
    }
  }

  static const Json& NullJson() { return internal::kNull; }
  static const Json& TrueJson() { return internal::kTrue; }
  static const Json& FalseJson() { return internal::kFalse; }

  const Json* json_;
  std::shared_ptr<const Json> owner_;
  // The value itself when it is a computed number. A number owns nothing,
  // so it is constructed in place and never destroyed: most values are
  // views, and a Json member would cost every one a constructor and a
  // destructor call.
  union Scalar {
    Scalar() {}
    ~Scalar() {}
    Json json;
  } scalar_;
};

}  // namespace wm::expressions::native

#endif  // WM_SERVER_EXPRESSIONS_NATIVE_VALUE_H_
