#include "server/expressions/native/prelude.h"

namespace wm::expressions::native {

absl::string_view PreludeSource() {
  static constexpr char kSource[] = R"jq(
def add(f): [f] | add;
def map_values(f): .[] |= f;
def in(xs): . as $x | xs | has($x);
def inside(xs): . as $x | xs | contains($x);
def recurse(f; cond): def r: ., (f | select(cond) | r); r;
def from_entries: map({ (.key // .Key // .name // .Name):
  if has("value") then .value else .Value end }) | add // {};
def with_entries(f): to_entries | map(f) | from_entries;
def while(cond; update): def _while: if cond then ., (update | _while) else empty end; _while;
def until(cond; next): def _until: if cond then . else next | _until end; _until;
def repeat(f): def _repeat: f, _repeat; _repeat;
def arrays: select(type == "array");
def objects: select(type == "object");
def iterables: select(type | . == "array" or . == "object");
def booleans: select(type == "boolean");
def numbers: select(type == "number");
def strings: select(type == "string");
def nulls: select(. == null);
def values: select(. != null);
def scalars: select(type | . != "array" and . != "object");
def finites: select(isfinite);
def normals: select(isnormal);
def combinations:
  if length == 0 then [] else .[0][] as $x | [$x] + (.[1:] | combinations) end;
def combinations(n): [limit(n; repeat(.))] | combinations;
def walk(f):
  def _walk: if type == "array" then map(_walk) elif type == "object" then map_values(_walk) end | f;
  _walk;
def first: .[0];
def last: .[-1];
def nth($n): .[$n];
def skip($n; g):
  if $n > 0 then foreach g as $item ($n; . - 1; if . < 0 then $item else empty end)
  elif $n == 0 then g
  else error("skip doesn't support negative count") end;
def nth($n; g):
  if $n >= 0 then first(skip($n; g)) else error("nth doesn't support negative index") end;
def del(f): delpaths([path(f)]);
def paths: path(..) | select(. != []);
def paths(f): path(.. | select(f)) | select(. != []);
def pick(f): . as $v | reduce path(f) as $p (null; setpath($p; $v | getpath($p)));
def match($re; $flags): _match($re; $flags; false)[];
def match($re): match($re; null);
def test($re; $flags): _match($re; $flags; true);
def test($re): test($re; null);
def capture($re; $flags): match($re; $flags) | .captures | _captures;
def capture($re): capture($re; null);
def scan($re; $flags):
  match($re; $flags + "g") | if .captures == [] then .string else [.captures[].string] end;
def scan($re): scan($re; null);
def splits($re; $flags):
  .[foreach (match($re; $flags + "g"), null) as {$offset, $length}
      (null; {start: .next, end: $offset, next: ($offset + $length)})];
def splits($re): splits($re; null);
def split($re; $flags): [splits($re; $flags)];
def sub($re; str; $flags):
  reduce match($re; $flags) as {$offset, $length, $captures}
    ({s: ., r: []};
      reduce ($captures | _captures | str) as $s
        (.i = 0; .r[.i] += .s[.next:$offset] + $s | .i += 1) |
      .next = $offset + $length) | .r[] + .s[.next:] // .s;
def sub($re; str): sub($re; str; null);
def gsub($re; str): sub($re; str; "g");
def gsub($re; str; $flags): sub($re; str; $flags + "g");
def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row | idx_expr | tostring] = $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def IN(s): any(s == .; .);
def IN(src; s): any(src == s; .);
.
)jq";
  return kSource;
}

}  // namespace wm::expressions::native
