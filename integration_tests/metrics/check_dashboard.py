"""Checks the Grafana dashboard against a live workloadmapd: every
workloadmap_ metric its queries name must be one the daemon exports.

    check_dashboard.py [--strict] DASHBOARD_JSON METRICS_URL

1. The dashboard is JSON with what Grafana needs to import it: uid, title,
   schemaVersion, panels, each with an id (unique), a type, a gridPos inside
   the 24 columns that overlaps no other panel's, and targets with a refId
   and an expr (rows: no targets); every $variable a query uses is one of
   the dashboard's template variables or one of Grafana's own ($__...); the
   parentheses, brackets and braces of each query balance.
2. The metric names in each target's expr and each query variable's query:
   the identifiers outside strings, label matchers, grouping lists and
   range brackets, that are not function names and start with
   "workloadmap_" (other exporters' metrics, such as DCGM's, are not ours to
   check).
3. A scrape of METRICS_URL, parsed by prometheus_client's text parser (the
   reference parser of the format, as check_metrics.py uses), gives the
   names a Prometheus would store: a gauge's name, a counter's NAME_total,
   a histogram's NAME_bucket, NAME_sum and NAME_count, every sample's name.
   Each name of step 2 must be among them.

The daemon's registry writes a labelled counter or histogram (the RPC
metrics) only once it has a series, so a daemon that has answered no call
has no workloadmap_rpc_requests_total in its scrape. Such a name passes
when a source file under server/ (in the repository this file is in)
registers it as a labelled counter or histogram, and is listed as "not in
this scrape"; --strict requires every name in the scrape.

Exits 1 with one line per problem on stderr (a missing metric is named
with the panels and targets that use it, and the nearest exported name),
2 for a dashboard that cannot be read or a scrape that fails or that the
parser refuses; 0 after one line per metric checked.
"""

import difflib
import json
import os
import re
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

PREFIX = "workloadmap_"
GRID_COLUMNS = 24
# Words that open a parenthesized list of label names, not an expression.
LABEL_LISTS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
# Grafana's own variables ($__rate_interval, $__interval, ...) start with
# "__"; $1 and the like are label_replace's capture groups, not variables.
VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)(?:[:.][^}]*)?\}|([A-Za-z_]\w*))|\[\[([A-Za-z_]\w*)(?::\w+)?\]\]")
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SOURCES = os.path.join(REPO, "server")


def panels_of(dashboard):
    """Every panel, the ones inside a collapsed row's panels included,
    with the list (top level or one row's) that it is laid out in."""
    for panel in dashboard.get("panels", []):
        yield panel, "top"
        if isinstance(panel, dict):
            for inner in panel.get("panels", []) or []:
                yield inner, f"row {panel.get('id')}"


def where(panel, target=None):
    text = f"panel {panel.get('id')} {panel.get('title', '')!r}"
    if target is not None:
        text += f" target {target.get('refId', '?')}"
    return text


def check_structure(dashboard, problems):
    for field, kind in (("uid", str), ("title", str), ("schemaVersion", int), ("panels", list)):
        if not isinstance(dashboard.get(field), kind) or dashboard.get(field) in ("", []):
            problems.append(f"dashboard: {field} missing or not a {kind.__name__}")
    if not isinstance(dashboard.get("panels"), list):
        return
    variables = set()
    for variable in (dashboard.get("templating") or {}).get("list", []):
        if not variable.get("name") or not variable.get("type"):
            problems.append(f"template variable without a name or type: {variable}")
        variables.add(variable.get("name"))

    ids = {}
    layouts = {}
    for panel, layout in panels_of(dashboard):
        if not isinstance(panel, dict):
            problems.append(f"a panel that is not an object: {panel!r}")
            continue
        label = where(panel)
        pid = panel.get("id")
        if not isinstance(pid, int):
            problems.append(f"{label}: no integer id")
        elif pid in ids:
            problems.append(f"{label}: id {pid} also used by {ids[pid]}")
        else:
            ids[pid] = label
        if not isinstance(panel.get("type"), str) or not panel["type"]:
            problems.append(f"{label}: no type")
        grid = panel.get("gridPos")
        if not isinstance(grid, dict) or not all(isinstance(grid.get(k), int) for k in "xywh"):
            problems.append(f"{label}: gridPos needs integers x, y, w and h: {grid}")
        elif grid["w"] < 1 or grid["h"] < 1 or grid["x"] < 0 or grid["y"] < 0 or grid["x"] + grid["w"] > GRID_COLUMNS:
            problems.append(f"{label}: gridPos {grid} is not inside the {GRID_COLUMNS} columns")
        else:
            layouts.setdefault(layout, []).append((label, grid))
        if panel.get("type") == "row":
            continue
        targets = panel.get("targets")
        if not isinstance(targets, list) or not targets:
            problems.append(f"{label}: no targets")
            continue
        refs = set()
        for target in targets:
            tlabel = where(panel, target)
            if not target.get("refId"):
                problems.append(f"{tlabel}: no refId")
            elif target["refId"] in refs:
                problems.append(f"{tlabel}: refId used twice")
            refs.add(target.get("refId"))
            if not isinstance(target.get("expr"), str) or not target["expr"].strip():
                problems.append(f"{tlabel}: no expr")
        for source in [panel.get("datasource")] + [t.get("datasource") for t in targets]:
            uid = source.get("uid", "") if isinstance(source, dict) else (source or "")
            for name in used_variables(uid):
                if name not in variables:
                    problems.append(f"{label}: data source names ${name}, which is no template variable")

    for layout, boxes in layouts.items():
        for i, (label_a, a) in enumerate(boxes):
            for label_b, b in boxes[i + 1:]:
                if (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and
                        a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]):
                    problems.append(f"{label_a} {a} overlaps {label_b} {b}")
    return variables


def used_variables(text):
    for match in VARIABLE.finditer(text):
        name = next(g for g in match.groups() if g)
        if not name.startswith("__"):
            yield name


def tokens(expr):
    """The PromQL tokens that matter here: ("ident", name, next_char),
    ("open", c), ("close", c). Strings, comments, numbers, durations and
    Grafana variables are skipped."""
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c in "\"'`":
            quote, i = c, i + 1
            while i < n and expr[i] != quote:
                i += 2 if expr[i] == "\\" and quote != "`" else 1
            i += 1
        elif c == "#":
            while i < n and expr[i] != "\n":
                i += 1
        elif c == "$":
            match = VARIABLE.match(expr, i) or re.compile(r"\$\w*").match(expr, i)
            i = match.end()
        elif c == "[" and expr.startswith("[[", i) and VARIABLE.match(expr, i):
            i = VARIABLE.match(expr, i).end()
        elif c.isdigit() or (c == "." and i + 1 < n and expr[i + 1].isdigit()):
            while i < n and (expr[i].isalnum() or expr[i] in "._"):
                i += 1
        elif c.isalpha() or c in "_:":
            start = i
            while i < n and (expr[i].isalnum() or expr[i] in "_:"):
                i += 1
            j = i
            while j < n and expr[j].isspace():
                j += 1
            yield ("ident", expr[start:i], expr[j] if j < n else "")
        elif c in "([{":
            yield ("open", c)
            i += 1
        elif c in ")]}":
            yield ("close", c)
            i += 1
        else:
            i += 1


def metric_names(expr):
    """(names, error): the metric identifiers of a PromQL expression (or of
    a Grafana query variable's label_values(...)), and what is unbalanced."""
    names = []
    stack = []  # (bracket, what is inside: "expr", "labels", "matchers", "range")
    pending_labels = False
    pairs = {")": "(", "]": "[", "}": "{"}
    for token in tokens(expr):
        inside = stack[-1][1] if stack else "expr"
        if token[0] == "open":
            bracket = token[1]
            if bracket == "{":
                kind = "matchers"
            elif bracket == "[":
                kind = "range"
            elif pending_labels:
                kind = "labels"
            else:
                kind = "expr" if inside == "expr" else inside
            stack.append((bracket, kind))
            pending_labels = False
            continue
        if token[0] == "close":
            if not stack or stack[-1][0] != pairs[token[1]]:
                return names, f"unbalanced {token[1]!r}"
            stack.pop()
            continue
        _, name, following = token
        if inside != "expr":
            continue  # a label name, a matcher, a duration
        if name in LABEL_LISTS:
            pending_labels = following == "("
            continue
        pending_labels = False
        if following == "(":
            continue  # a function or an aggregation
        if name.startswith(PREFIX):
            names.append(name)
    if stack:
        return names, f"unclosed {stack[-1][0]!r}"
    return names, None


def queries(dashboard):
    """(panel or variable description, the query) for every PromQL text."""
    for panel, _ in panels_of(dashboard):
        if not isinstance(panel, dict):
            continue
        for target in panel.get("targets") or []:
            if isinstance(target, dict) and isinstance(target.get("expr"), str):
                yield where(panel, target), target["expr"]
    for variable in (dashboard.get("templating") or {}).get("list", []):
        if variable.get("type") != "query":
            continue
        query = variable.get("query")
        if isinstance(query, dict):
            query = query.get("query")
        if isinstance(query, str):
            yield f"template variable {variable.get('name')!r}", query


def scraped_names(url):
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode("utf-8")
    names = set()
    for family in text_string_to_metric_families(text):
        # The parser names a counter family without its _total.
        if family.type == "counter":
            names.add(family.name + "_total")
        elif family.type == "histogram":
            names.update(family.name + suffix for suffix in ("_bucket", "_sum", "_count"))
        elif family.type == "summary":
            names.update(family.name + suffix for suffix in ("", "_sum", "_count"))
        else:
            names.add(family.name)
        names.update(sample.name for sample in family.samples)
    return names


def written_after_first_sample():
    """{name: (what, file)} for the labelled counters and histograms that the
    daemon's sources (server/, tests left out) register: the registry writes
    them only once they have a series."""
    string = r'"(?:[^"\\]|\\.)*"'
    pattern = re.compile(r'Add(Counter|Histogram)\(\s*"(' + PREFIX + r'\w+)"\s*,\s*(?:' + string +
                         r'\s*)+,\s*\{([^}]*)\}')
    found = {}
    for directory, _, files in os.walk(SOURCES):
        for file in sorted(files):
            if not file.endswith(".cc") or file.endswith("_test.cc"):
                continue
            path = os.path.join(directory, file)
            try:
                with open(path, encoding="utf-8") as source:
                    code = source.read()
            except (OSError, UnicodeDecodeError):
                continue
            where = os.path.relpath(path, REPO)
            for kind, name, labels in pattern.findall(code):
                if not labels.strip():
                    continue  # an unlabelled one is written from the start
                if kind == "Histogram":
                    for suffix in ("_bucket", "_sum", "_count"):
                        found[name + suffix] = (f"a labelled histogram ({name})", where)
                else:
                    found[name] = ("a labelled counter", where)
    return found


def main(argv):
    strict = "--strict" in argv
    args = [a for a in argv if a != "--strict"]
    if len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    path, url = args
    try:
        with open(path, encoding="utf-8") as file:
            dashboard = json.load(file)
    except (OSError, ValueError) as error:
        print(f"check_dashboard: {path}: {error}", file=sys.stderr)
        return 2
    if not isinstance(dashboard, dict):
        print(f"check_dashboard: {path}: not a JSON object", file=sys.stderr)
        return 2

    problems = []
    variables = check_structure(dashboard, problems) or set()
    used = {}  # metric -> where
    for place, query in queries(dashboard):
        for name in used_variables(query):
            if name not in variables:
                problems.append(f"{place}: ${name} is no template variable of the dashboard")
        names, error = metric_names(query)
        if error:
            problems.append(f"{place}: {error} in {query!r}")
        if not names and place.startswith("panel") and PREFIX in query:
            problems.append(f"{place}: no metric name found in {query!r}")
        for name in names:
            used.setdefault(name, []).append(place)

    try:
        exported = scraped_names(url)
    except Exception as error:  # urllib's and the parser's errors alike
        print(f"check_dashboard: scrape of {url}: {error}", file=sys.stderr)
        return 2
    lazy = {} if strict else written_after_first_sample()
    for name in sorted(used):
        places = "; ".join(used[name])
        if name in exported:
            uses = len(used[name])
            print(f"ok: {name} ({uses} {'query' if uses == 1 else 'queries'})")
        elif name in lazy:
            what, source = lazy[name]
            print(f"ok, not in this scrape: {name}: {source} registers it as {what}, written from its "
                  f"first series on ({places})")
        else:
            close = difflib.get_close_matches(name, sorted(n for n in exported if n.startswith(PREFIX)), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            problems.append(f"{name} is not exported by the daemon at {url}{hint}: used by {places}")

    for problem in problems:
        print(f"check_dashboard: {path}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"dashboard ok: {len(used)} workloadmap metrics in {sum(len(p) for p in used.values())} uses")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
