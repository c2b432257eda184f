package workloadmap_test

// Tests against a real workloadmapd watching a real kube-apiserver
// (integration_tests/clients/go_test.sh sets them up). Skipped unless the
// environment names the daemon and the namespace:
//
//	WM_ADDRESS          the daemon's TCP address (HOST:PORT)
//	WM_SOCKET           the same daemon's Unix socket (unix:PATH)
//	WM_TEST_NAMESPACE   a namespace holding the seed JobSets (create-demo.sh)
//	WM_TEST_JOBSETS     their names, comma-separated; "demo" first
//	WM_SEED_DIR         integration_tests/seed (set-pod-ready.sh), for the watch tests
//	WM_DAEMON           the workloadmapd binary, for the tests that run their
//	                    own daemon (restart, slow consumer), with KUBECONFIG
//
// kubectl is $KUBECTL, else $WM_TESTBED_BIN/kubectl, else kubectl on PATH.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"iter"
	"maps"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/workloadmap/workloadmap/client/go/workloadmap"
	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

type testEnv struct {
	address   string
	socket    string
	namespace string
	jobsets   []string
	seedDir   string
}

// integration returns the environment, or skips the test without one.
func integration(t *testing.T) testEnv {
	t.Helper()
	env := testEnv{
		address:   os.Getenv("WM_ADDRESS"),
		socket:    os.Getenv("WM_SOCKET"),
		namespace: os.Getenv("WM_TEST_NAMESPACE"),
		seedDir:   os.Getenv("WM_SEED_DIR"),
	}
	if env.address == "" || env.namespace == "" || os.Getenv("WM_TEST_JOBSETS") == "" {
		t.Skip("needs a daemon: WM_ADDRESS, WM_TEST_NAMESPACE and WM_TEST_JOBSETS (see integration_tests/clients/go_test.sh)")
	}
	env.jobsets = strings.Split(os.Getenv("WM_TEST_JOBSETS"), ",")
	return env
}

func testContext(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, address string, opts ...workloadmap.Option) *workloadmap.Client {
	t.Helper()
	c, err := workloadmap.Dial(testContext(t, 30*time.Second), address, opts...)
	if err != nil {
		t.Fatalf("Dial(%s): %v", address, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// runKubectl runs kubectl, returning its output or an error with its stderr.
func runKubectl(args ...string) (string, error) {
	bin := os.Getenv("KUBECTL")
	if bin == "" && os.Getenv("WM_TESTBED_BIN") != "" {
		bin = filepath.Join(os.Getenv("WM_TESTBED_BIN"), "kubectl")
	}
	if bin == "" {
		bin = "kubectl"
	}
	out, err := exec.Command(bin, args...).Output()
	if exit, ok := err.(*exec.ExitError); ok {
		return "", fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, exit.Stderr)
	} else if err != nil {
		return "", fmt.Errorf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runKubectl(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setPodReady flips a pod's readiness as its kubelet and controllers would.
func setPodReady(t *testing.T, env testEnv, pod string, ready bool) {
	t.Helper()
	if env.seedDir == "" {
		t.Skip("needs WM_SEED_DIR (integration_tests/seed)")
	}
	cmd := exec.Command(filepath.Join(env.seedDir, "set-pod-ready.sh"), "--namespace", env.namespace, pod, map[bool]string{true: "true", false: "false"}[ready])
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("set-pod-ready.sh %s %v: %v\n%s", pod, ready, err, out)
	}
}

// component returns the row of a summary's component instance.
func component(t *testing.T, s *workloadmapv1.WorkloadSummary, instance string) *workloadmapv1.ComponentSummary {
	t.Helper()
	for _, c := range s.GetComponents() {
		if c.GetInstanceId() == instance {
			return c
		}
	}
	t.Fatalf("%s has no component instance %q: %v", s.GetRef().GetName(), instance, s.GetComponents())
	return nil
}

// podsOf returns the names of a resolved workload's pods, by instance id.
func podsOf(w *workloadmapv1.ResolvedWorkload) map[string][]string {
	pods := map[string][]string{}
	var walk func(*workloadmapv1.Component)
	walk = func(c *workloadmapv1.Component) {
		for _, i := range c.GetInstances() {
			for _, p := range i.GetPods() {
				pods[i.GetId()] = append(pods[i.GetId()], p.GetName())
			}
			for _, child := range i.GetChildren() {
				walk(child)
			}
		}
	}
	walk(w.GetRoot())
	return pods
}

func TestDialTCPAndUnixSocket(t *testing.T) {
	env := integration(t)
	if env.socket == "" {
		t.Skip("needs WM_SOCKET")
	}
	ctx := testContext(t, 30*time.Second)
	addresses := []string{env.address, env.socket}
	if path := strings.TrimPrefix(env.socket, "unix:"); filepath.IsAbs(path) {
		addresses = append(addresses, "unix://"+path)
	}
	var uids []string
	for _, address := range addresses {
		c := dial(t, address)
		serving, err := c.Health(ctx)
		if err != nil || serving != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Health over %s = %v, %v; want SERVING", address, serving, err)
		}
		w, err := c.Resolve(ctx, workloadmap.Ref(env.namespace, "jobset", env.jobsets[0]))
		if err != nil {
			t.Fatalf("Resolve over %s: %v", address, err)
		}
		uids = append(uids, w.GetRef().GetUid())
	}
	if uids[0] == "" || len(slices.Compact(uids)) != 1 {
		t.Errorf("the same JobSet over %v has UIDs %v", addresses, uids)
	}
}

func TestDialUnreachable(t *testing.T) {
	integration(t)
	dir := t.TempDir()
	_, err := workloadmap.Dial(testContext(t, 10*time.Second), "unix:"+filepath.Join(dir, "none.sock"))
	if status.Code(err) != codes.Unavailable {
		t.Errorf("Dial of a missing socket = %v, want Unavailable", err)
	}
	if _, err := workloadmap.Dial(testContext(t, 10*time.Second), "localhost"); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Dial without a port = %v, want InvalidArgument", err)
	}
}

func TestResolveDemo(t *testing.T) {
	env := integration(t)
	c := dial(t, env.address)
	ctx := testContext(t, 30*time.Second)
	ref, err := workloadmap.ParseRef(env.namespace, "jobset/"+env.jobsets[0])
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Resolve(ctx, ref, workloadmap.WithPods(0))
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if got := w.GetRef(); got.GetKind() != "JobSet" || got.GetGroup() != "jobset.x-k8s.io" ||
		got.GetNamespace() != env.namespace || got.GetName() != env.jobsets[0] {
		t.Errorf("resolved %v", got)
	}
	if got := workloadmap.GPUs(w.GetResources()); got != 12 {
		t.Errorf("GPUs = %d, want 12", got)
	}
	s := workloadmap.Summarize(w)
	if !slices.Equal(s.GetMatchedStatuses(), []string{"Running"}) {
		t.Errorf("matched statuses %v, want [Running]", s.GetMatchedStatuses())
	}
	if len(s.GetComponents()) != 2 {
		t.Fatalf("components %v, want leader and worker", s.GetComponents())
	}
	for _, want := range []struct {
		instance string
		replicas int32
		gpus     int64
	}{{"leader", 1, 4}, {"worker", 2, 8}} {
		got := component(t, s, want.instance)
		r := got.GetReplicas()
		if r.GetDesired() != want.replicas || r.GetReady() != want.replicas || got.GetGpus() != want.gpus {
			t.Errorf("%s: ready %d desired %d GPUs %d, want %d ready of %d with %d GPUs",
				want.instance, r.GetReady(), r.GetDesired(), got.GetGpus(), want.replicas, want.replicas, want.gpus)
		}
	}
	pods := podsOf(w)
	if len(pods["leader"]) != 1 || len(pods["worker"]) != 2 {
		t.Errorf("pods %v, want 1 leader and 2 workers", pods)
	}
	// Through a pod, with TopOwner: the same workload.
	top, err := c.Resolve(ctx, workloadmap.Ref(env.namespace, "Pod", pods["worker"][0]), workloadmap.TopOwner())
	if err != nil || top.GetRef().GetUid() != w.GetRef().GetUid() {
		t.Errorf("Resolve(pod, TopOwner) = %v, %v; want JobSet %s", top.GetRef(), err, w.GetRef().GetUid())
	}
}

func TestResolveErrors(t *testing.T) {
	env := integration(t)
	c := dial(t, env.address)
	ctx := testContext(t, 30*time.Second)
	_, err := c.Resolve(ctx, workloadmap.Ref(env.namespace, "JobSet", "no-such-jobset"))
	if status.Code(err) != codes.NotFound {
		t.Errorf("Resolve of a missing JobSet = %v, want NotFound", err)
	}
	_, err = c.Resolve(ctx, workloadmap.Ref(env.namespace, "Frobnicator", "x"))
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Resolve of a kind no definition covers = %v, want FailedPrecondition", err)
	}
	_, err = c.Resolve(ctx, workloadmap.Ref(env.namespace, "JobSet", ""))
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("Resolve without a name = %v, want InvalidArgument", err)
	}
}

func TestListPagesThroughEveryWorkload(t *testing.T) {
	env := integration(t)
	// Count the ListWorkloads calls, to see that page size 1 pages.
	var calls int
	var mu sync.Mutex
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(method, "/ListWorkloads") {
			mu.Lock()
			calls++
			mu.Unlock()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	c := dial(t, env.address, workloadmap.WithDialOptions(grpc.WithUnaryInterceptor(count)))
	ctx := testContext(t, 30*time.Second)
	seen := map[string]int{}
	for w, err := range c.List(ctx, &workloadmapv1.ListWorkloadsRequest{Namespace: env.namespace, Kinds: []string{"JobSet"}, PageSize: 1}) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		seen[w.GetRef().GetName()]++
		if w.GetGpus() != 12 {
			t.Errorf("%s: GPUs %d, want 12", w.GetRef().GetName(), w.GetGpus())
		}
	}
	for _, name := range env.jobsets {
		if seen[name] != 1 {
			t.Errorf("%s listed %d times, want once", name, seen[name])
		}
	}
	if len(seen) != len(env.jobsets) {
		t.Errorf("listed %v, want exactly %v", seen, env.jobsets)
	}
	// One call per workload, and one more that finds no next page or the
	// last page's token empty: at least one call per workload.
	if calls < len(env.jobsets) {
		t.Errorf("%d ListWorkloads calls for %d workloads with page size 1", calls, len(env.jobsets))
	}

	// A bad filter is the daemon's InvalidArgument, yielded once.
	var errs []error
	for w, err := range c.List(ctx, &workloadmapv1.ListWorkloadsRequest{Namespace: env.namespace, LabelSelector: "a in (b"}) {
		if w != nil {
			t.Errorf("List with a bad selector yielded %v", w.GetRef())
		}
		errs = append(errs, err)
	}
	if len(errs) != 1 || status.Code(errs[0]) != codes.InvalidArgument {
		t.Errorf("List with a bad selector yielded errors %v, want one InvalidArgument", errs)
	}
}

func TestGangOfADemoPod(t *testing.T) {
	env := integration(t)
	c := dial(t, env.address)
	ctx := testContext(t, 30*time.Second)
	w, err := c.Resolve(ctx, workloadmap.Ref(env.namespace, "jobset", env.jobsets[0]), workloadmap.WithPods(0))
	if err != nil {
		t.Fatal(err)
	}
	pod := podsOf(w)["leader"][0]
	resp, err := c.Gang(ctx, &workloadmapv1.ObjectRef{Namespace: env.namespace, Name: pod})
	if err != nil {
		t.Fatalf("Gang(%s): %v", pod, err)
	}
	if owner := resp.GetTopOwner(); owner.GetKind() != "JobSet" || owner.GetUid() != w.GetRef().GetUid() {
		t.Errorf("top owner %v, want the JobSet %s", owner, w.GetRef().GetUid())
	}
	groups := resp.GetGang().GetPodGroups()
	if len(groups) != 1 || groups[0].GetMinMember() != 3 || !strings.Contains(groups[0].GetName(), w.GetRef().GetUid()) {
		t.Fatalf("pod groups %v, want one of 3 members named after the JobSet's UID", groups)
	}
	if a := resp.GetAssignment(); a.GetPod() != pod || a.GetPodGroup() != groups[0].GetName() || a.GetError() != "" {
		t.Errorf("assignment %v, want %s in %s", a, pod, groups[0].GetName())
	}
	if len(resp.GetGang().GetAssignments()) != 3 {
		t.Errorf("assignments %v, want the 3 pods", resp.GetGang().GetAssignments())
	}
	_, err = c.Gang(ctx, &workloadmapv1.ObjectRef{Namespace: env.namespace, Name: "no-such-pod"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("Gang of a missing pod = %v, want NotFound", err)
	}
}

// watcher reads a watch one event at a time.
type watcher struct {
	t    *testing.T
	next func() (workloadmap.Event, error, bool)
	stop func()
}

func watch(t *testing.T, ctx context.Context, c *workloadmap.Client, req *workloadmapv1.WatchWorkloadsRequest, opts ...workloadmap.WatchOption) *watcher {
	next, stop := iter.Pull2(c.Watch(ctx, req, opts...))
	t.Cleanup(stop)
	return &watcher{t: t, next: next, stop: stop}
}

func (w *watcher) event() workloadmap.Event {
	w.t.Helper()
	ev, err, ok := w.next()
	if !ok || err != nil {
		w.t.Fatalf("watch ended: %v", err)
	}
	return ev
}

// snapshot reads ADDED events up to SYNCED, returning the workloads' names
// and the SYNCED event.
func (w *watcher) snapshot() ([]string, workloadmap.Event) {
	w.t.Helper()
	var names []string
	for {
		ev := w.event()
		switch ev.Type {
		case workloadmapv1.WorkloadEvent_SYNCED:
			return names, ev
		case workloadmapv1.WorkloadEvent_ADDED:
			names = append(names, ev.Workload.GetRef().GetName())
		default:
			w.t.Fatalf("%v before SYNCED in a snapshot", ev.Type)
		}
	}
}

func sameNames(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func TestWatchSeesChangesAndResumes(t *testing.T) {
	env := integration(t)
	c := dial(t, env.address)
	ctx := testContext(t, 90*time.Second)
	target := env.jobsets[len(env.jobsets)-1]
	req := &workloadmapv1.WatchWorkloadsRequest{Namespace: env.namespace, Kinds: []string{"JobSet"}}

	w := watch(t, ctx, c, req)
	names, synced := w.snapshot()
	if !sameNames(names, env.jobsets) {
		t.Fatalf("snapshot %v, want %v", names, env.jobsets)
	}
	if synced.Resync {
		t.Error("the first snapshot is flagged as a resync")
	}

	resolved, err := c.Resolve(ctx, workloadmap.Ref(env.namespace, "jobset", target), workloadmap.WithPods(0))
	if err != nil {
		t.Fatal(err)
	}
	pod := podsOf(resolved)["worker"][0]
	t.Cleanup(func() { setPodReady(t, env, pod, true) })
	setPodReady(t, env, pod, false)

	// MODIFIED events of the target until its workers show one ready pod
	// (the pod, its Job and the JobSet change in turn).
	last := synced.Revision
	var seen uint64
	for seen == 0 {
		ev := w.event()
		if ev.Type != workloadmapv1.WorkloadEvent_MODIFIED || ev.Revision <= last {
			t.Fatalf("after SYNCED %d: %v at %d, want MODIFIED with a later revision", synced.Revision, ev.Type, ev.Revision)
		}
		last = ev.Revision
		if ev.Workload.GetRef().GetName() == target &&
			component(t, workloadmap.Summarize(ev.Workload), "worker").GetReplicas().GetReady() == 1 {
			seen = ev.Revision
		}
	}
	w.stop()

	// While no one watches, the pod becomes ready again; a watch resumed
	// after `seen` gets those changes without a snapshot first.
	setPodReady(t, env, pod, true)
	resumed := watch(t, ctx, c, &workloadmapv1.WatchWorkloadsRequest{Namespace: env.namespace, Kinds: []string{"JobSet"}, ResumeRevision: seen})
	last = seen
	for ready := false; !ready; {
		ev := resumed.event()
		if ev.Resync || ev.Type == workloadmapv1.WorkloadEvent_ADDED || ev.Revision < last {
			t.Fatalf("resumed after %d: %v at %d (resync %v), want changes after it", seen, ev.Type, ev.Revision, ev.Resync)
		}
		last = ev.Revision
		if ev.Type == workloadmapv1.WorkloadEvent_MODIFIED {
			ready = component(t, workloadmap.Summarize(ev.Workload), "worker").GetReplicas().GetReady() == 2
		}
	}
}

func TestWatchBadFilter(t *testing.T) {
	env := integration(t)
	c := dial(t, env.address)
	ctx := testContext(t, 30*time.Second)
	var errs []error
	for _, err := range c.Watch(ctx, &workloadmapv1.WatchWorkloadsRequest{LabelSelector: "a in (b"}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || status.Code(errs[0]) != codes.InvalidArgument {
		t.Errorf("Watch with a bad selector yielded %v, want one InvalidArgument", errs)
	}
}

// daemon is a workloadmapd the test runs itself, on a Unix socket.
type daemon struct {
	t      *testing.T
	args   []string
	socket string
	log    string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has exited
	err    error         // its exit status, once done
}

// startDaemon runs workloadmapd on the testbed (scoped to the test
// namespace) with extra flags, and waits until it is ready.
func startDaemon(t *testing.T, env testEnv, flags ...string) *daemon {
	t.Helper()
	if os.Getenv("WM_DAEMON") == "" || os.Getenv("KUBECONFIG") == "" {
		t.Skip("needs WM_DAEMON and KUBECONFIG to run a daemon")
	}
	// (A short directory: socket paths are limited to 107 bytes.)
	dir, err := os.MkdirTemp("", "wm-go-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "wm.sock")
	d := &daemon{t: t, socket: "unix:" + socket, log: filepath.Join(dir, "daemon.log"), args: append([]string{
		"--kubeconfig", os.Getenv("KUBECONFIG"), "--namespace", env.namespace,
		"--listen", "unix:" + socket, "--metrics-address", "off", "--shutdown-grace", "0s",
	}, flags...)}
	d.start()
	t.Cleanup(d.kill)
	return d
}

func (d *daemon) start() {
	d.t.Helper()
	log, err := os.Create(d.log)
	if err != nil {
		d.t.Fatal(err)
	}
	defer log.Close()
	d.cmd = exec.Command(os.Getenv("WM_DAEMON"), d.args...)
	d.cmd.Stderr = log
	if err := d.cmd.Start(); err != nil {
		d.t.Fatalf("starting workloadmapd: %v", err)
	}
	d.done = make(chan struct{})
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	deadline := time.After(60 * time.Second)
	for !strings.Contains(d.logs(), " INFO ready ") {
		select {
		case <-d.done:
			d.t.Fatalf("workloadmapd exited (%v):\n%s", d.err, d.logs())
		case <-deadline:
			d.kill()
			d.t.Fatalf("workloadmapd not ready after 60 s:\n%s", d.logs())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (d *daemon) logs() string {
	b, _ := os.ReadFile(d.log)
	return string(b)
}

// tcpAddress is the address of the daemon's TCP listener ("--listen
// 127.0.0.1:0" picks the port; the daemon logs it).
func (d *daemon) tcpAddress() string {
	d.t.Helper()
	m := regexp.MustCompile(`listening address=127\.0\.0\.1:0 port=(\d+)`).FindStringSubmatch(d.logs())
	if m == nil {
		d.t.Fatalf("no TCP listener in the daemon's log:\n%s", d.logs())
	}
	return "127.0.0.1:" + m[1]
}

// stop ends the daemon with SIGTERM, as a rollout would.
func (d *daemon) stop() {
	d.t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		d.t.Fatal(err)
	}
	<-d.done
	if d.err != nil {
		d.t.Errorf("workloadmapd exited with %v after SIGTERM:\n%s", d.err, d.logs())
	}
}

func (d *daemon) kill() {
	select {
	case <-d.done:
	default:
		d.cmd.Process.Kill()
		<-d.done
	}
}

func TestWatchResyncsAfterDaemonRestart(t *testing.T) {
	env := integration(t)
	d := startDaemon(t, env)
	c := dial(t, d.socket)
	ctx := testContext(t, 90*time.Second)
	var mu sync.Mutex
	var retries []codes.Code
	notify := workloadmap.WithRetryNotify(func(err error, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		retries = append(retries, status.Code(err))
	})
	w := watch(t, ctx, c, &workloadmapv1.WatchWorkloadsRequest{Kinds: []string{"JobSet"}},
		notify, workloadmap.WithBackoff(50*time.Millisecond, 500*time.Millisecond))
	names, _ := w.snapshot()
	if !sameNames(names, env.jobsets) {
		t.Fatalf("snapshot %v, want %v", names, env.jobsets)
	}

	d.stop()
	d.start()
	// The new process has no history of the old one's revisions: the
	// watch starts over with a new snapshot, flagged on its first event.
	// (The watch may reconnect while the daemon is still syncing: then
	// some workloads come as ADDED after SYNCED.)
	first := w.event()
	if !first.Resync {
		t.Fatalf("first event after the restart: %v without resync", first.Type)
	}
	added := map[string]bool{}
	for i, ev := 0, first; len(added) < len(env.jobsets); i, ev = i+1, w.event() {
		if ev.Type == workloadmapv1.WorkloadEvent_ADDED {
			added[ev.Workload.GetRef().GetName()] = true
		}
		if ev.Resync != (i == 0) {
			t.Errorf("%v at %d flagged resync %v", ev.Type, ev.Revision, ev.Resync)
		}
	}
	if !sameNames(slices.Collect(maps.Keys(added)), env.jobsets) {
		t.Errorf("new snapshot %v, want %v", added, env.jobsets)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(retries, codes.Unavailable) || retries[len(retries)-1] != codes.OutOfRange {
		t.Errorf("retries after %v, want Unavailable while the daemon was away, then OutOfRange", retries)
	}
}

func TestWatchResumesAfterFallingBehind(t *testing.T) {
	env := integration(t)
	// A queue of one event: a consumer that stops reading is cut off as
	// soon as the stream's flow-control window is full.
	d := startDaemon(t, env, "--watch-queue-size", "1")
	// A fixed 64 KiB window (no BDP growth), so that a few dozen events fill it.
	c := dial(t, d.socket, workloadmap.WithDialOptions(grpc.WithInitialWindowSize(1<<16), grpc.WithInitialConnWindowSize(1<<16)))
	ctx := testContext(t, 120*time.Second)
	var mu sync.Mutex
	var retries []error
	notify := workloadmap.WithRetryNotify(func(err error, _ time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		retries = append(retries, err)
	})
	w := watch(t, ctx, c, &workloadmapv1.WatchWorkloadsRequest{Kinds: []string{"JobSet"}, IncludePods: true},
		notify, workloadmap.WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	_, synced := w.snapshot()

	// Not reading, change every JobSet many times (a label: each change is
	// a new resourceVersion, so a new resolved view), a few kubectl at once.
	t.Cleanup(func() { kubectl(t, "-n", env.namespace, "label", "jobsets", "--all", "wm-go-test-round-") })
	var wg sync.WaitGroup
	for worker := range 4 {
		wg.Go(func() {
			for i := range 10 {
				if _, err := runKubectl("-n", env.namespace, "label", "jobsets", "--all", "--overwrite",
					"wm-go-test-round="+strconv.Itoa(worker*10+i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	want := map[string]string{}
	for _, name := range env.jobsets {
		want[name] = kubectl(t, "-n", env.namespace, "get", "jobset", name, "-o", "jsonpath={.metadata.resourceVersion}")
	}

	// Reading again: every change in revision order, once, up to each
	// JobSet's current resourceVersion, across the cut.
	last := synced.Revision
	got := map[string]string{}
	for !maps.Equal(got, want) {
		ev := w.event()
		if ev.Resync || ev.Type == workloadmapv1.WorkloadEvent_ADDED || ev.Type == workloadmapv1.WorkloadEvent_DELETED {
			t.Fatalf("%v at %d (resync %v): want only changes, resumed", ev.Type, ev.Revision, ev.Resync)
		}
		if ev.Type == workloadmapv1.WorkloadEvent_SYNCED {
			if ev.Revision < last {
				t.Fatalf("SYNCED at %d after %d", ev.Revision, last)
			}
			continue
		}
		if ev.Revision <= last {
			t.Fatalf("MODIFIED at %d after %d: repeated or out of order", ev.Revision, last)
		}
		last = ev.Revision
		got[ev.Workload.GetRef().GetName()] = ev.Workload.GetResourceVersion()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retries) == 0 || status.Code(retries[0]) != codes.ResourceExhausted {
		t.Errorf("retries %v, want the daemon's ResourceExhausted first", retries)
	}
}

// pki is a CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files.
type pki struct {
	ca, serverCert, serverKey, clientCert, clientKey string
	// issueClient writes a client certificate of this CA for the common name
	// and organizations (RBAC's user and groups) and returns its files.
	issueClient func(commonName string, organizations ...string) (cert, key string)
}

func writePKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, blockType string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newKey := func() *ecdsa.PrivateKey {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	now := time.Now()
	caKey := newKey()
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "wm-go-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	var p pki
	p.ca = write("ca.crt", "CERTIFICATE", caDER)
	issue := func(name string, organizations []string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key := newKey()
		template := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name, Organization: organizations},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, template, caTemplate, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".crt", "CERTIFICATE", der), write(name+".key", "PRIVATE KEY", keyDER)
	}
	p.serverCert, p.serverKey = issue("server", nil, 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("client", nil, 3, x509.ExtKeyUsageClientAuth)
	serial := int64(3)
	p.issueClient = func(commonName string, organizations ...string) (string, string) {
		serial++
		return issue(commonName, organizations, serial, x509.ExtKeyUsageClientAuth)
	}
	return p
}

func TestDialMutualTLS(t *testing.T) {
	env := integration(t)
	p := writePKI(t)
	d := startDaemon(t, env, "--listen", "127.0.0.1:0", "--tls-cert", p.serverCert, "--tls-key", p.serverKey,
		"--tls-client-ca", p.ca, "--tls-require-client-cert")
	address := d.tcpAddress()
	ctx := testContext(t, 30*time.Second)

	c := dial(t, address, workloadmap.WithTLSFiles(p.ca, p.clientCert, p.clientKey))
	if _, err := c.Resolve(ctx, workloadmap.Ref(env.namespace, "jobset", env.jobsets[0])); err != nil {
		t.Errorf("Resolve over mutual TLS: %v", err)
	}
	for name, opts := range map[string][]workloadmap.Option{
		"no client certificate": {workloadmap.WithTLSFiles(p.ca, "", "")},
		"plaintext":             nil,
		"an unknown CA":         {workloadmap.WithTLS(&tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12})},
	} {
		if c, err := workloadmap.Dial(ctx, address, opts...); status.Code(err) != codes.Unavailable {
			t.Errorf("Dial with %s = %v, want Unavailable", name, err)
			if c != nil {
				c.Close()
			}
		}
	}
	if _, err := workloadmap.Dial(ctx, address, workloadmap.WithTLSFiles(p.ca, p.clientCert, "")); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Dial with a certificate without its key = %v, want InvalidArgument", err)
	}
}

// With --authentication=kubernetes and --tls-client-ca, a verified client
// certificate names the caller as the apiserver would: its CN the user, its
// O the groups, each asked of RBAC through SubjectAccessReview. A Role bound
// to a group lets a certificate of that group read the JobSet; the same
// user without the group is refused, naming what it lacks.
func TestAClientCertificateIsAuthorizedAsItsUserAndGroups(t *testing.T) {
	env := integration(t)
	p := writePKI(t)
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1000000)
	user, group := "wm-cert-user-"+suffix, "wm-cert-readers-"+suffix
	role := "wm-cert-" + suffix
	kubectl(t, "-n", env.namespace, "create", "role", role, "--verb=get", "--resource=jobsets.jobset.x-k8s.io")
	t.Cleanup(func() { runKubectl("-n", env.namespace, "delete", "role,rolebinding", role) })
	kubectl(t, "-n", env.namespace, "create", "rolebinding", role, "--role="+role, "--group="+group)
	// RBAC's informers catch up with the new binding before the daemon asks.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := runKubectl("-n", env.namespace, "auth", "can-i", "get", "jobsets.jobset.x-k8s.io",
			"--as="+user, "--as-group="+group)
		if strings.TrimSpace(out) == "yes" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("RBAC did not grant the group within 30 s: %q", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	d := startDaemon(t, env, "--authentication=kubernetes", "--listen", "127.0.0.1:0",
		"--tls-cert", p.serverCert, "--tls-key", p.serverKey, "--tls-client-ca", p.ca)
	address := d.tcpAddress()
	ctx := testContext(t, 30*time.Second)
	ref := workloadmap.Ref(env.namespace, "jobset", env.jobsets[0])

	cert, key := p.issueClient(user, "some-other-group", group)
	member := dial(t, address, workloadmap.WithTLSFiles(p.ca, cert, key))
	if w, err := member.Resolve(ctx, ref); err != nil {
		t.Errorf("Resolve with a certificate of group %s: %v\n%s", group, err, d.logs())
	} else if w.GetRef().GetName() != env.jobsets[0] {
		t.Errorf("Resolve answered %q, want %q", w.GetRef().GetName(), env.jobsets[0])
	}

	cert, key = p.issueClient(user)
	outsider := dial(t, address, workloadmap.WithTLSFiles(p.ca, cert, key))
	_, err := outsider.Resolve(ctx, ref)
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "jobsets") ||
		!strings.Contains(err.Error(), env.namespace) {
		t.Errorf("Resolve as %s without the group = %v, want PermissionDenied naming jobsets in %s",
			user, err, env.namespace)
	}
	// Without a certificate or a token the call names no one.
	anonymous := dial(t, address, workloadmap.WithTLSFiles(p.ca, "", ""))
	if _, err := anonymous.Resolve(ctx, ref); status.Code(err) != codes.Unauthenticated {
		t.Errorf("Resolve over TLS without a client certificate = %v, want Unauthenticated", err)
	}
}

// A daemon with --authentication=kubernetes serves a caller whose
// ServiceAccount token (from a file, as the kubelet projects it) RBAC lets
// get the JobSet, and refuses a call without a token, saying how to send one.
func TestTokenFromAFileAuthenticatesTheCaller(t *testing.T) {
	env := integration(t)
	d := startDaemon(t, env, "--authentication=kubernetes", "--token-audiences=workloadmap")
	ctx := testContext(t, 60*time.Second)
	sa := fmt.Sprintf("go-client-%d", time.Now().UnixNano()%1000000)
	kubectl(t, "-n", env.namespace, "create", "serviceaccount", sa)
	t.Cleanup(func() { runKubectl("-n", env.namespace, "delete", "serviceaccount,role,rolebinding", sa) })
	kubectl(t, "-n", env.namespace, "create", "role", sa, "--verb=get", "--resource=jobsets.jobset.x-k8s.io")
	kubectl(t, "-n", env.namespace, "create", "rolebinding", sa, "--role="+sa,
		"--serviceaccount="+env.namespace+":"+sa)
	file := filepath.Join(t.TempDir(), "token")
	token := kubectl(t, "-n", env.namespace, "create", "token", sa, "--audience=workloadmap")
	if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	anonymous := dial(t, d.socket)
	_, err := anonymous.Resolve(ctx, workloadmap.Ref(env.namespace, "jobset", env.jobsets[0]))
	if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "WithTokenFile") {
		t.Errorf("Resolve without a token = %v, want Unauthenticated saying how to send one", err)
	}
	c := dial(t, d.socket, workloadmap.WithTokenFile(file))
	// RBAC's informers catch up with the new Role.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err = c.Resolve(ctx, workloadmap.Ref(env.namespace, "jobset", env.jobsets[0]))
		if err == nil || time.Now().After(deadline) || status.Code(err) != codes.PermissionDenied {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Resolve with the ServiceAccount's token: %v\n%s", err, d.logs())
	}
	// A token the file no longer holds is not sent: the file is re-read.
	if err := os.WriteFile(file, []byte("not-a-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = c.Resolve(ctx, workloadmap.Ref(env.namespace, "jobset", env.jobsets[0]))
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("Resolve with the rewritten token file = %v, want Unauthenticated", err)
	}
	static := dial(t, d.socket, workloadmap.WithBearerToken(token))
	if _, err := static.Resolve(ctx, workloadmap.Ref(env.namespace, "jobset", env.jobsets[0])); err != nil {
		t.Errorf("Resolve with WithBearerToken: %v", err)
	}
}
