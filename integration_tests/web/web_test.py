"""The web page in a real headless Chromium (Debian's, through Selenium and
Debian's chromedriver) against a running workloadmapd with
--authentication=kubernetes and the seed JobSet; web_test.sh sets it up and
passes, in the environment:

    WM_WEB_URL              the daemon's HTTP root (http://127.0.0.1:PORT/)
    WM_WEB_NAMESPACE        the namespace of the seed demo
    WM_WORKER_POD           one of its worker pods
    WM_SET_POD_READY        integration_tests/seed/set-pod-ready.sh
    WM_VIEWER_TOKEN         a token (audience workloadmap) that may get, list
                            and watch JobSets in the namespace
    WM_NOBODY_TOKEN         a token (audience workloadmap) without any RBAC
    WM_APISERVER_TOKEN      the viewer's token for the apiserver's audience
    WM_CHROMIUM, WM_CHROMEDRIVER
    WM_TEST_ARTIFACTS_DIR   where the screenshots go

Prints "ok: ..." per check; the first failed check prints "FAIL: ...", saves
web-failure.png, web-failure.html and the browser's console log, and exits 1.
"""

import http.client
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager download

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402

URL = os.environ["WM_WEB_URL"]
NS = os.environ["WM_WEB_NAMESPACE"]
WORKER_POD = os.environ["WM_WORKER_POD"]
SET_POD_READY = os.environ["WM_SET_POD_READY"]
VIEWER = os.environ["WM_VIEWER_TOKEN"]
NOBODY = os.environ["WM_NOBODY_TOKEN"]
APISERVER_TOKEN = os.environ["WM_APISERVER_TOKEN"]
CHROMIUM = os.environ.get("WM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("WM_CHROMEDRIVER", "/usr/bin/chromedriver")
ARTIFACTS = os.environ["WM_TEST_ARTIFACTS_DIR"]
# How long the page may take to follow a change made through the apiserver.
LIVE_TIMEOUT = 20

started = time.monotonic()
browsers = []  # (name, driver): the last one is the one a failure shows


class Fail(Exception):
    pass


def fail(message):
    raise Fail(message)


def ok(message):
    print(f"ok: {message} ({time.monotonic() - started:.1f} s)", flush=True)


def wait_until(what, probe, check, timeout=LIVE_TIMEOUT, interval=0.1):
    """Polls probe() until check(state) holds; fails saying what was last seen."""
    deadline = time.monotonic() + timeout
    state = None
    while True:
        try:
            state = probe()
            if check(state):
                return state
        except WebDriverException as e:  # a re-rendered element, a page in between
            state = f"{type(e).__name__}: {e.msg if hasattr(e, 'msg') else e}"
        if time.monotonic() >= deadline:
            fail(f"{what}: not within {timeout} s; last seen: {json.dumps(state, indent=1, default=str)}")
        time.sleep(interval)


# --- the page's state, read in one script (rows may be re-rendered at any time)

JS_HELPERS = """
const visible = el => !!el && !el.closest('[hidden]') && el.getClientRects().length > 0;
const text = (root, sel) => { const e = root && root.querySelector(sel); return e ? e.textContent.trim() : null; };
"""

PAGE_JS = JS_HELPERS + """
const [ns, name] = arguments;
const table = document.querySelector('table#workloads');
const rows = table ? [...table.querySelectorAll('tbody tr[data-key]')] : [];
const r = rows.find(r => r.dataset.namespace === ns && r.dataset.name === name);
const signin = document.querySelector('#signin');
return {
  stream: document.body.dataset.stream || null,
  message: text(document, '#message'),
  signin: visible(signin),
  workloadsView: visible(document.querySelector('section#workloads-view')),
  workloadView: visible(document.querySelector('section#workload-view')),
  definitionsView: visible(document.querySelector('section#definitions-view')),
  table: !!table,
  rows: rows.length,
  count: text(document, '#workload-count'),
  row: r ? {
    kind: r.dataset.kind, phaseAttr: r.dataset.phase,
    phase: text(r, 'td.phase'),
    chips: [...r.querySelectorAll('td.phase span.chip')].map(c => c.textContent.trim()),
    gpus: text(r, 'td.gpus'),
    age: text(r, 'td.age'),
    link: !!r.querySelector('td.name a'),
    components: [...r.querySelectorAll('td.components span.component')].map(c => ({
      component: c.dataset.component, instance: c.dataset.instance || null,
      ready: c.dataset.ready, desired: c.dataset.desired, text: c.textContent.trim()})),
  } : null,
  noReload: window.__noReload === 1,
};
"""

WORKLOAD_JS = JS_HELPERS + """
const view = document.querySelector('section#workload-view');
const table = document.querySelector('table#components');
const all = sel => table ? [...table.querySelectorAll(sel)] : [];
return {
  visible: visible(view),
  workloadsViewHidden: !visible(document.querySelector('section#workloads-view')),
  title: text(document, 'h1#workload-title'),
  message: text(document, '#message'),
  components: all('tr.component').map(r => ({component: r.dataset.component, gpus: text(r, 'td.gpus'),
    text: r.textContent.replace(/\\s+/g, ' ').trim()})),
  instances: all('tr.instance').map(r => ({component: r.dataset.component, instance: r.dataset.instance,
    gpus: text(r, 'td.gpus'), text: r.textContent.replace(/\\s+/g, ' ').trim()})),
  pods: all('tr.pod').map(r => ({pod: r.dataset.pod, phase: text(r, 'td.pod-phase'),
    ready: text(r, 'td.pod-ready'), node: text(r, 'td.node'), gpus: text(r, 'td.gpus')})),
  conditions: !!document.querySelector('table#conditions'),
  gang: (() => { const g = document.querySelector('section#gang'); if (!g) return null;
    const c = g.cloneNode(true); c.querySelectorAll('h1, h2, h3').forEach(e => e.remove());
    return c.textContent.replace(/\\s+/g, ' ').trim(); })(),
  definition: text(document, '#definition'),
  stream: document.body.dataset.stream || null,
  noReload: window.__noReload === 1,
};
"""

DEFINITIONS_JS = JS_HELPERS + """
return {
  visible: visible(document.querySelector('section#definitions-view')),
  definitions: text(document, 'table#definitions'),
  definitionRows: document.querySelectorAll('table#definitions tbody tr').length,
  rejected: !!document.querySelector('table#rejected'),
};
"""


def page(d, name="demo"):
    return d.execute_script(PAGE_JS, NS, name)


def role(components, name):
    """The span or row of one of the JobSet's roles (a replicated Job): an
    instance of the definition's component "replicatedjob", so data-instance
    names the role and data-component the component (as `wmctl get` prints
    "leader 1/1 · worker 2/2"); a row of a component named after the role
    would do too."""
    for c in components:
        if c.get("instance") == name:
            return c
    for c in components:
        if c.get("component") == name:
            return c
    return None


def screenshot(d, name):
    path = os.path.join(ARTIFACTS, name)
    if not d.save_screenshot(path):
        fail(f"could not save {path}")
    return path


def new_browser(name):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    d.set_page_load_timeout(30)
    d.set_script_timeout(10)
    browsers.append((name, d))
    return d


def close_browser(name, d):
    """Saves the console log; a JavaScript error in it fails the test."""
    try:
        entries = d.get_log("browser")
    except WebDriverException:
        entries = []
    with open(os.path.join(ARTIFACTS, f"web-console-{name}.log"), "w") as f:
        for e in entries:
            f.write(f"{e.get('level')} {e.get('message')}\n")
    d.quit()
    browsers.remove((name, d))
    errors = [e["message"] for e in entries if e.get("level") == "SEVERE" and "Uncaught" in e.get("message", "")]
    if errors:
        fail(f"JavaScript errors in the {name} browser's console: {errors}")


def sign_in(d, token):
    wait_until("the sign-in form #signin with input#token is shown (the API answers 401 without a token)",
               lambda: d.execute_script(JS_HELPERS + """
                 const f = document.querySelector('#signin');
                 return {signin: visible(f), token: visible(f && f.querySelector('input#token')),
                         submit: !!(f && f.querySelector('button[type=submit]')),
                         message: text(document, '#message')};"""),
               lambda s: s["signin"] and s["token"] and s["submit"])
    field = d.find_element(By.CSS_SELECTOR, "#signin input#token")
    field.click()
    # A paste: the whole text as one trusted input event, as Chromium inserts a
    # paste (typing a 1,000-character token key by key takes 2 s).
    d.execute_cdp_cmd("Input.insertText", {"text": token})
    if field.get_attribute("value") != token:
        fail("the token pasted into input#token is not its value")
    d.find_element(By.CSS_SELECTOR, "#signin button[type=submit]").click()


def click(d, css, what):
    """Clicks the element when it is there (re-found if the table re-rendered it)."""
    wait_until(f"{what} ({css}) can be clicked",
               lambda: d.find_element(By.CSS_SELECTOR, css).click() or True, bool, timeout=10)


def set_pod_ready(pod, ready):
    run = subprocess.run([SET_POD_READY, "--namespace", NS, pod, "true" if ready else "false"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"set-pod-ready.sh {pod} {ready}: {run.stderr.strip()}")


def same_origin_only(d, what):
    urls = d.execute_script("return [location.href, ...performance.getEntriesByType('resource').map(e => e.name)];")
    origin = d.execute_script("return location.origin;")
    foreign = [u for u in urls if not u.startswith(origin + "/")]
    if foreign:
        fail(f"{what}: the page fetched from elsewhere than {origin}: {foreign}")
    return len(urls)


# --- plain HTTP -----------------------------------------------------------------

def http_get(path, token=None, base=URL):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(urllib.parse.urljoin(base, path), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def json_body(status, content_type, body, what):
    if "application/json" not in content_type:
        fail(f"{what}: Content-Type {content_type!r}, not JSON (status {status}): {body[:300]!r}")
    try:
        return json.loads(body)
    except ValueError as e:
        fail(f"{what}: not JSON ({e}): {body[:300]!r}")


def expect_error(path, token, code, status_name, what):
    status, content_type, body = http_get(path, token)
    if status != code:
        fail(f"{what}: HTTP {status}, expected {code}: {body[:300]!r}")
    error = json_body(status, content_type, body, what).get("error")
    if not isinstance(error, dict) or error.get("code") != code or error.get("status") != status_name \
            or not error.get("message"):
        fail(f"{what}: expected {{\"error\": {{\"code\": {code}, \"status\": \"{status_name}\", \"message\": ...}}}}, "
             f"got {body[:300]!r}")
    return error["message"]


def check_api():
    workload = f"api/v1/namespaces/{NS}/workloads/JobSet/demo"
    for asset, kind in (("", "text/html"), ("app.js", "javascript"), ("app.css", "text/css")):
        status, content_type, body = http_get(asset)
        if status != 200 or kind not in content_type:
            fail(f"GET /{asset} without a token: HTTP {status}, {content_type!r} (the page's assets are public)")
        if asset == "":
            index = body.decode("utf-8", "replace")
    absolute = [u for u in re.findall(r'''(?:src|href|action)\s*=\s*["']([^"']+)''', index)
                if u.startswith("/") or (re.match(r"^[a-z][a-z0-9+.-]*:", u, re.I) and not u.startswith("data:"))]
    if absolute:
        fail(f"index.html refers to absolute URLs (the page must work behind a path prefix): {absolute}")
    ok("/, app.js and app.css are served without a token; index.html uses relative URLs only")

    message = expect_error("api/v1/workloads", None, 401, "UNAUTHENTICATED", "api/v1/workloads without a token")
    expect_error("api/v1/workloads", APISERVER_TOKEN, 401, "UNAUTHENTICATED",
                 "api/v1/workloads with a token for the apiserver's audience, not the daemon's")
    ok(f"api/v1/workloads without a token, or with one for another audience: 401 UNAUTHENTICATED ({message!r})")

    status, content_type, body = http_get("api/v1/workloads", NOBODY)
    if status == 403:
        expect_error("api/v1/workloads", NOBODY, 403, "PERMISSION_DENIED", "api/v1/workloads as nobody")
        ok("api/v1/workloads as a caller without rights: 403")
    else:
        answer = json_body(status, content_type, body, "api/v1/workloads as nobody")
        if status != 200 or answer.get("workloads") or answer.get("filtered") is not True:
            fail(f"api/v1/workloads as a caller without rights: expected 403, or 200 with no workloads and "
                 f"\"filtered\": true; got HTTP {status}: {body[:500]!r}")
        ok("api/v1/workloads as a caller without rights: 200, no workloads, \"filtered\": true")
    expect_error(workload, NOBODY, 403, "PERMISSION_DENIED", f"{workload} as nobody")
    for extra in ("/gang", "?includePods=true"):
        expect_error(workload + extra, NOBODY, 403, "PERMISSION_DENIED", f"{workload}{extra} as nobody")
    ok(f"{workload} (with pods, and /gang) as a caller without rights: 403 PERMISSION_DENIED")
    check_denied_stream()

    status, content_type, body = http_get(f"api/v1/workloads?namespace={NS}", VIEWER)
    answer = json_body(status, content_type, body, "api/v1/workloads as the viewer")
    demo = [w for w in answer.get("workloads", []) if w.get("ref", {}).get("name") == "demo"]
    if status != 200 or len(demo) != 1 or demo[0].get("gpus") != "12":
        fail(f"api/v1/workloads?namespace={NS} as the viewer: expected demo with \"gpus\": \"12\"; "
             f"HTTP {status}: {body[:800]!r}")
    ok("api/v1/workloads as the viewer: demo, \"gpus\": \"12\"")


def check_denied_stream():
    """The event stream of a caller without rights: a snapshot without workloads."""
    request = urllib.request.Request(urllib.parse.urljoin(URL, "api/v1/events"),
                                     headers={"Authorization": f"Bearer {NOBODY}", "Accept": "text/event-stream"})
    try:
        answer = urllib.request.urlopen(request, timeout=10)
    except urllib.error.HTTPError as e:
        if e.code == 403:
            ok("api/v1/events as a caller without rights: 403")
            return
        fail(f"api/v1/events as nobody: HTTP {e.code}: {e.read()[:300]!r}")
    events = []
    with answer:
        if "text/event-stream" not in answer.headers.get("Content-Type", ""):
            fail(f"api/v1/events: Content-Type {answer.headers.get('Content-Type')!r}")
        try:
            for raw in answer:  # (each read times out after 10 s)
                line = raw.decode("utf-8").rstrip("\r\n")
                if line.startswith("event:"):
                    events.append(line[len("event:"):].strip())
                    if events[-1] in ("SYNCED", "error"):
                        break
        except TimeoutError:
            fail(f"api/v1/events as a caller without rights: no SYNCED within 10 s (events: {events})")
    if events != ["SYNCED"]:
        fail(f"api/v1/events as a caller without rights: expected only SYNCED; the stream ended after events "
             f"{events}")
    ok("api/v1/events as a caller without rights: SYNCED, no workload")


# --- the browser ---------------------------------------------------------------

def check_authorized():
    d = new_browser("viewer")
    d.get(URL)
    sign_in(d, VIEWER)
    s = wait_until("the table shows demo with 12 GPUs and phase Running",
                   lambda: page(d),
                   lambda s: s["row"] and s["row"]["gpus"] == "12" and "Running" in (s["row"]["phase"] or ""),
                   timeout=30)
    row = s["row"]
    if s["signin"]:
        fail("the sign-in form is still shown after signing in")
    if row["kind"] != "JobSet" or not row["link"]:
        fail(f"the demo row: data-kind {row['kind']!r}, a link in td.name: {row['link']}")
    if "Running" not in row["chips"]:
        fail(f"td.phase of demo has no span.chip Running: {row['chips']}")
    storage = d.execute_script("""
      const t = arguments[0];
      const has = s => Object.keys(s).some(k => (s.getItem(k) || '').includes(t));
      return {session: has(sessionStorage), local: has(localStorage), cookie: document.cookie.includes(t),
              url: location.href.includes(t)};""", VIEWER)
    if storage != {"session": True, "local": False, "cookie": False, "url": False}:
        fail(f"the token must be kept in sessionStorage only: {storage}")
    ok(f"signed in with a pasted token (kept in sessionStorage only); demo: {row['gpus']} GPUs, "
       f"phase {row['chips']}, {s['rows']} row(s)")

    s = wait_until("the event stream is connected and synced (document.body.dataset.stream == 'live')",
                   lambda: page(d), lambda s: s["stream"] == "live")
    leader, worker = role(s["row"]["components"], "leader"), role(s["row"]["components"], "worker")
    if not leader or not worker:
        fail(f"td.components of demo: no span.component for leader and worker: {s['row']['components']}")
    if (leader["ready"], leader["desired"], worker["ready"], worker["desired"]) != ("1", "1", "2", "2"):
        fail(f"ready/desired: leader {leader['ready']}/{leader['desired']}, worker {worker['ready']}/"
             f"{worker['desired']}; expected 1/1 and 2/2")
    screenshot(d, "web-workloads.png")
    ok(f"components leader {leader['text']!r}, worker {worker['text']!r}; stream live; web-workloads.png")
    same_origin_only(d, "the workloads table")

    check_filters(d)

    d.execute_script("window.__noReload = 1;")
    click(d, f'table#workloads tr[data-namespace="{NS}"][data-name="demo"] td.name a', "the demo link")
    w = wait_until("the workload page shows demo's leader and worker with their pods on their nodes",
                   lambda: d.execute_script(WORKLOAD_JS),
                   lambda w: w["visible"] and w["workloadsViewHidden"] and role(w["components"] + w["instances"],
                                                                                  "leader")
                   and role(w["components"] + w["instances"], "worker") and len(w["pods"]) == 3
                   and all(p["node"] for p in w["pods"]))
    if "demo" not in (w["title"] or ""):
        fail(f"h1#workload-title: {w['title']!r}")
    nodes = sorted(p["node"] for p in w["pods"])
    if nodes != ["node-1", "node-2", "node-3"]:
        fail(f"td.node of the pods: {nodes}")
    if any(p["gpus"] != "4" for p in w["pods"]):
        fail(f"td.gpus of the pods (4 each): {[p['gpus'] for p in w['pods']]}")
    rows = w["components"] + w["instances"]
    gpus = {"leader": role(rows, "leader").get("gpus"), "worker": role(rows, "worker").get("gpus"),
            "component": [c["gpus"] for c in w["components"]]}
    if gpus != {"leader": "4", "worker": "8", "component": ["12"]}:
        fail(f"td.gpus of the component and instance rows: {gpus}; expected leader 4, worker 8, the component 12")
    if WORKER_POD not in [p["pod"] for p in w["pods"]]:
        fail(f"no tr.pod[data-pod={WORKER_POD}]: {[p['pod'] for p in w['pods']]}")
    if any(p["phase"] != "Running" for p in w["pods"]):
        fail(f"td.pod-phase: {[p['phase'] for p in w['pods']]}")
    if not w["conditions"]:
        fail("no table#conditions on the workload page")
    w = wait_until("the gang instructions (section#gang) and the definition (#definition) are shown",
                   lambda: d.execute_script(WORKLOAD_JS),
                   lambda w: w["gang"] and "Loading" not in w["gang"]
                   and "jobset" in (w["definition"] or "").lower())
    if "Could not" in w["gang"]:
        fail(f"section#gang: {w['gang']!r}")
    ready_text = {p["ready"] for p in w["pods"]}
    if len(ready_text) != 1:
        fail(f"td.pod-ready of three ready pods differ: {w['pods']}")
    ready_text = ready_text.pop()
    screenshot(d, "web-workload.png")
    workload_url = d.current_url
    ok(f"workload page: {len(w['components'])} component and {len(w['instances'])} instance rows, pods on "
       f"{nodes}, GPUs 12 = leader 4 + worker 8, 4 a pod, pod ready {ready_text!r}; "
       f"definition {w['definition'][:60]!r}; gang {w['gang'][:80]!r}; web-workload.png")

    click(d, "a#nav-workloads", "the workloads link")
    wait_until("the workloads table is shown again", lambda: page(d),
               lambda s: s["workloadsView"] and not s["workloadView"] and s["row"])
    before = page(d)["row"]
    changed = time.monotonic()
    set_pod_ready(WORKER_POD, False)
    # The worker's ready count follows the pod; the Initializing status, the
    # JobSet's replicatedJobsStatus (set-pod-ready.sh writes it last).
    s = wait_until(f"after {WORKER_POD} was made not ready, the demo row shows worker ready 1 of 2 and "
                   "the status Initializing",
                   lambda: page(d),
                   lambda s: s["row"] and (role(s["row"]["components"], "worker") or {}).get("ready") == "1"
                   and "Initializing" in s["row"]["chips"])
    seconds = time.monotonic() - changed
    after = s["row"]
    if not s["noReload"]:
        fail("the page was reloaded (window.__noReload is gone)")
    screenshot(d, "web-not-ready.png")
    ok(f"worker pod not ready: the row changed {seconds:.2f} s after set-pod-ready.sh started (it patches "
       f"the pod, its Job and the JobSet), without a reload; worker "
       f"{role(before['components'], 'worker')['text']!r} -> {role(after['components'], 'worker')['text']!r}, "
       f"phase {before['chips']} -> {after['chips']}, data-phase {before['phaseAttr']!r} -> "
       f"{after['phaseAttr']!r}; web-not-ready.png")

    # The workload page follows too: the pod is not ready there, then ready again.
    click(d, f'table#workloads tr[data-namespace="{NS}"][data-name="demo"] td.name a', "the demo link")
    pod_ready = lambda w: next((p["ready"] for p in w["pods"] if p["pod"] == WORKER_POD), None)  # noqa: E731
    w = wait_until(f"the workload page shows {WORKER_POD} not ready",
                   lambda: d.execute_script(WORKLOAD_JS),
                   lambda w: w["visible"] and pod_ready(w) not in (None, ready_text))
    not_ready_text = pod_ready(w)
    changed = time.monotonic()
    set_pod_ready(WORKER_POD, True)
    wait_until(f"after {WORKER_POD} was made ready again, its row on the workload page shows it ready",
               lambda: d.execute_script(WORKLOAD_JS), lambda w: w["visible"] and pod_ready(w) == ready_text)
    seconds = time.monotonic() - changed
    if not d.execute_script("return window.__noReload === 1;"):
        fail("the page was reloaded (window.__noReload is gone)")
    ok(f"workload page live: {WORKER_POD} ready {not_ready_text!r} -> {ready_text!r} {seconds:.2f} s after "
       "set-pod-ready.sh started, without a reload")

    click(d, "a#nav-workloads", "the workloads link")
    wait_until("the demo row is back to worker 2/2 and without the not-ready phase", lambda: page(d),
               lambda s: s["row"] and (role(s["row"]["components"], "worker") or {}).get("ready") == "2"
               and s["row"]["chips"] == before["chips"])

    click(d, "a#nav-definitions", "the definitions link")
    s = wait_until("the definitions page lists the catalog's JobSet definition",
                   lambda: d.execute_script(DEFINITIONS_JS),
                   lambda s: s["visible"] and "jobset" in (s["definitions"] or "").lower())
    if not s["rejected"]:
        fail("no table#rejected on the definitions page")
    ok(f"definitions page: {s['definitionRows']} definitions, table#rejected present")

    click(d, "a#nav-workloads", "the workloads link")
    wait_until("the workloads table is shown again", lambda: page(d), lambda s: s["workloadsView"] and s["row"])
    d.refresh()
    s = wait_until("after a reload, the tab is still signed in (sessionStorage) and shows the table",
                   lambda: page(d), lambda s: s["row"] is not None or s["signin"], timeout=30)
    if s["signin"] and s["row"] is None:
        fail("after a reload, the page asks for the token again")
    same_origin_only(d, "the page after a reload")
    close_browser("viewer", d)
    return workload_url


def check_filters(d):
    """The search box narrows the table; the filters offer and keep demo."""
    search = d.find_element(By.CSS_SELECTOR, "input#search")
    search.send_keys("no-such-workload-zz")
    wait_until("the search box hides demo when nothing matches", lambda: page(d),
               lambda s: s["row"] is None, timeout=10)
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.DELETE)
    search.send_keys("dem")
    wait_until("the search box shows demo for 'dem'", lambda: page(d), lambda s: s["row"] is not None, timeout=10)
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.DELETE)
    # Each filter offers the values of the data; choosing demo's keeps it.
    for select, value in (("filter-namespace", NS), ("filter-kind", "JobSet"), ("filter-phase", "Running")):
        element = wait_until(f"select#{select} offers {value}",
                             lambda: d.find_element(By.CSS_SELECTOR, f"select#{select}"),
                             lambda e: value in [o.get_attribute("value") for o in Select(e).options], timeout=10)
        Select(element).select_by_value(value)
        s = wait_until(f"with select#{select} = {value}, demo is shown", lambda: page(d),
                       lambda s: s["row"] is not None and s["rows"] == 1, timeout=10)
        Select(d.find_element(By.CSS_SELECTOR, f"select#{select}")).select_by_value("")
    wait_until("demo is shown with the search box and filters cleared", lambda: page(d),
               lambda s: s["row"] is not None, timeout=10)
    ok(f"search box and filters: 'no-such-workload-zz' hides demo, 'dem' shows it; namespace {NS}, kind JobSet "
       f"and phase Running keep it ({s['count']!r})")


def check_denied(workload_url):
    d = new_browser("nobody")
    d.get(URL)
    sign_in(d, NOBODY)
    s = wait_until("a caller without rights: the page is signed in, live, and says something in #message",
                   lambda: page(d),
                   lambda s: not s["signin"] and s["message"] and (s["stream"] == "live" or s["rows"] == 0),
                   timeout=30)
    s = wait_until("a caller without rights: the stream is live (the snapshot has arrived)",
                   lambda: page(d), lambda s: s["stream"] == "live")
    rendered = d.execute_script("return document.body.innerText;")
    if s["rows"] or s["row"] or "demo" in rendered \
            or "demo" in d.execute_script("return document.querySelector('table#workloads').textContent;"):
        fail(f"a caller without rights sees workloads: {s['rows']} row(s); page text: {rendered[:500]!r}")
    screenshot(d, "web-denied.png")
    ok(f"a caller without rights sees no workload; #message says {s['message']!r}; web-denied.png")

    if workload_url.rstrip("/") != URL.rstrip("/"):
        d.get(workload_url)
        w = wait_until("a caller without rights opening demo's workload page: a new message in #message",
                       lambda: d.execute_script(WORKLOAD_JS),
                       lambda w: w["message"] and w["message"] != s["message"], timeout=30)
        if w["pods"] or w["instances"]:
            fail(f"a caller without rights sees demo's pods or instances on {workload_url}: {w}")
        rendered = d.execute_script("return document.body.innerText;")
        leaked = [x for x in ("node-1", "node-2", "node-3", WORKER_POD, "demo-leader") if x in rendered]
        if leaked:
            fail(f"a caller without rights sees demo's details on {workload_url}: {leaked}")
        ok(f"a caller without rights opening {workload_url[len(URL):]!r}: no pods or nodes; "
           f"#message says {w['message']!r}")
    close_browser("nobody", d)


class PrefixProxy:
    """A reverse proxy on 127.0.0.1 that serves the daemon under /wm/ (the
    prefix stripped, responses streamed: the event stream goes through), and
    answers 404 for anything outside the prefix, noting it."""

    HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
           "transfer-encoding", "upgrade", "host"}

    def __init__(self, upstream, prefix="/wm"):
        target = urllib.parse.urlsplit(upstream)
        proxy = self
        self.outside = []

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # a response ends with the connection: streams need nothing else

            def log_message(self, *args):
                pass

            def do_GET(self):
                if not self.path.startswith(prefix + "/"):
                    if self.path != "/favicon.ico":  # the browser's own guess, not the page's
                        proxy.outside.append(self.path)
                    self.send_error(404, "outside the prefix")
                    return
                upstream_conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in PrefixProxy.HOP}
                try:
                    upstream_conn.request("GET", self.path[len(prefix):], headers=headers)
                    answer = upstream_conn.getresponse()
                    self.send_response(answer.status, answer.reason)
                    for k, v in answer.getheaders():
                        if k.lower() not in PrefixProxy.HOP:
                            self.send_header(k, v)
                    self.end_headers()
                    while True:
                        chunk = answer.read1(65536)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        self.wfile.flush()
                except (OSError, http.client.HTTPException):
                    pass  # the browser went away, or the daemon did
                finally:
                    upstream_conn.close()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{prefix}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def check_prefix():
    proxy = PrefixProxy(URL)
    try:
        d = new_browser("prefix")
        d.get(proxy.url)
        sign_in(d, VIEWER)
        wait_until(f"behind {proxy.url}: demo with 12 GPUs, stream live", lambda: page(d),
                   lambda s: s["row"] and s["row"]["gpus"] == "12" and s["stream"] == "live", timeout=30)
        click(d, f'table#workloads tr[data-namespace="{NS}"][data-name="demo"] td.name a', "the demo link")
        wait_until(f"behind {proxy.url}: the workload page with its pods", lambda: d.execute_script(WORKLOAD_JS),
                   lambda w: w["visible"] and len(w["pods"]) == 3)
        screenshot(d, "web-prefix.png")
        if not d.current_url.startswith(proxy.url):
            fail(f"behind the prefix, the workload page left it: {d.current_url}")
        same_origin_only(d, "behind the prefix")
        close_browser("prefix", d)
        if proxy.outside:
            fail(f"behind {proxy.url}, the page asked for paths outside the prefix: {proxy.outside}")
        ok(f"behind a path prefix ({proxy.url}): table, live stream and workload page; web-prefix.png")
    finally:
        proxy.close()


def save_failure():
    if not browsers:
        return
    name, d = browsers[-1]
    try:
        d.save_screenshot(os.path.join(ARTIFACTS, "web-failure.png"))
        with open(os.path.join(ARTIFACTS, "web-failure.html"), "w") as f:
            f.write(d.page_source)
        with open(os.path.join(ARTIFACTS, "web-failure-console.log"), "w") as f:
            for e in d.get_log("browser"):
                f.write(f"{e.get('level')} {e.get('message')}\n")
        print(f"  (the {name} browser was at {d.current_url}; web-failure.png, web-failure.html and "
              f"web-failure-console.log in {ARTIFACTS})", file=sys.stderr)
    except WebDriverException as e:
        print(f"  (no failure screenshot: {e})", file=sys.stderr)


def main():
    os.makedirs(ARTIFACTS, exist_ok=True)
    # Killed (a test timeout): still quit the browsers, in the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        check_api()
        workload_url = check_authorized()
        check_denied(workload_url)
        check_prefix()
    except Fail as e:
        print(f"FAIL: {e}", file=sys.stderr)
        save_failure()
        return 1
    except Exception as e:  # a browser or driver error outside a wait: say where
        traceback.print_exc()
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        save_failure()
        return 1
    finally:
        for _, d in list(browsers):
            try:
                d.quit()
            except WebDriverException:
                pass
    print(f"web page checks passed in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
