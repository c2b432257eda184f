package workloadmap

import (
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

const (
	added    = workloadmapv1.WorkloadEvent_ADDED
	modified = workloadmapv1.WorkloadEvent_MODIFIED
	synced   = workloadmapv1.WorkloadEvent_SYNCED
)

func ev(typ workloadmapv1.WorkloadEvent_Type, revision uint64) *workloadmapv1.WorkloadEvent {
	return &workloadmapv1.WorkloadEvent{Type: typ, Revision: revision}
}

// feed hands events to r and returns their Resync flags.
func feed(r *resumer, events ...*workloadmapv1.WorkloadEvent) []bool {
	var flags []bool
	for _, e := range events {
		flags = append(flags, r.event(e).Resync)
	}
	return flags
}

func TestResumerResumesAfterTheLastEvent(t *testing.T) {
	r := newResumer(0)
	if from := r.start(); from != 0 {
		t.Fatalf("first stream resumes from %d, want a snapshot", from)
	}
	// Snapshot ADDED revisions are per workload (not ordered): no resume point.
	feed(r, ev(added, 7), ev(added, 3), ev(synced, 10), ev(modified, 12), ev(modified, 15))
	for _, err := range []error{
		status.Error(codes.ResourceExhausted, "the client fell behind; resume with resume_revision 15"),
		status.Error(codes.Unavailable, "Cancelling all calls"),
		status.Error(codes.Canceled, "the stream broke"),
		io.EOF,
	} {
		if action := r.end(err); action != retryAfterBackoff {
			t.Errorf("after %v: action %d, want a retry after backoff", err, action)
		}
		if from := r.start(); from != 15 {
			t.Errorf("after %v: resumes from %d, want 15", err, from)
		}
	}
	// A resumed stream's backlog is in revision order, before its SYNCED.
	feed(r, ev(modified, 16), ev(modified, 18))
	r.end(status.Error(codes.Unavailable, ""))
	if from := r.start(); from != 18 {
		t.Errorf("resumes from %d after a backlog event, want 18", from)
	}
	if flags := feed(r, ev(synced, 20)); flags[0] {
		t.Error("a resumed stream is flagged as a resync")
	}
	r.end(io.EOF)
	if from := r.start(); from != 20 {
		t.Errorf("resumes from %d after SYNCED, want 20", from)
	}
}

func TestResumerSnapshotCutShortStartsOver(t *testing.T) {
	r := newResumer(0)
	r.start()
	// Cut before any event: nothing to replace.
	r.end(status.Error(codes.Unavailable, ""))
	if from := r.start(); from != 0 {
		t.Fatalf("resumes from %d, want a snapshot", from)
	}
	if flags := feed(r, ev(added, 5)); flags[0] {
		t.Error("first event flagged as a resync")
	}
	r.end(status.Error(codes.ResourceExhausted, "the client fell behind during the snapshot; watch again"))
	if from := r.start(); from != 0 {
		t.Fatalf("resumes from %d after a partial snapshot, want a snapshot", from)
	}
	if flags := feed(r, ev(added, 5), ev(added, 6), ev(synced, 9)); flags[0] != true || flags[1] || flags[2] {
		t.Errorf("resync flags %v, want only the first event of the new snapshot", flags)
	}
}

func TestResumerOutOfRangeResyncs(t *testing.T) {
	r := newResumer(0)
	r.start()
	feed(r, ev(added, 1), ev(synced, 2), ev(modified, 3))
	if action := r.end(status.Error(codes.OutOfRange, "revision 3 is no longer in the daemon's history")); action != retryNow {
		t.Errorf("OutOfRange: action %d, want an immediate retry", action)
	}
	if from := r.start(); from != 0 {
		t.Errorf("resumes from %d after OutOfRange, want a snapshot", from)
	}
	// An empty new snapshot: SYNCED carries the flag.
	if flags := feed(r, ev(synced, 100)); !flags[0] {
		t.Error("SYNCED of a new empty snapshot not flagged as a resync")
	}
}

func TestResumerStartingAtARevision(t *testing.T) {
	// The caller holds state from before the watch: a new snapshot replaces it.
	r := newResumer(42)
	if from := r.start(); from != 42 {
		t.Fatalf("resumes from %d, want 42", from)
	}
	r.end(status.Error(codes.OutOfRange, ""))
	if from := r.start(); from != 0 {
		t.Fatalf("resumes from %d after OutOfRange, want a snapshot", from)
	}
	if flags := feed(r, ev(added, 50)); !flags[0] {
		t.Error("the snapshot replacing the caller's state is not flagged as a resync")
	}
}

func TestResumerStopsOnOtherErrors(t *testing.T) {
	for _, err := range []error{
		status.Error(codes.InvalidArgument, "label_selector: bad"),
		status.Error(codes.NotFound, "cluster \"x\" is not served"),
		status.Error(codes.PermissionDenied, ""),
		status.Error(codes.Unimplemented, ""),
	} {
		r := newResumer(0)
		r.start()
		if action := r.end(err); action != stop {
			t.Errorf("%v: action %d, want stop", err, action)
		}
	}
	// OutOfRange for a stream that resumed from nothing is not about a revision.
	r := newResumer(0)
	r.start()
	if action := r.end(status.Error(codes.OutOfRange, "")); action != stop {
		t.Errorf("OutOfRange of a snapshot stream: action %d, want stop", action)
	}
}

func TestBackoff(t *testing.T) {
	base, limit := 100*time.Millisecond, time.Second
	for failures, want := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		want *= time.Millisecond
		for range 20 {
			got := backoff(base, limit, failures)
			if got < want/2 || got > want {
				t.Fatalf("backoff after %d failures = %v, want %v..%v", failures, got, want/2, want)
			}
		}
	}
	if got := backoff(0, 0, 3); got != 0 {
		t.Errorf("backoff with no base = %v", got)
	}
}
