package workloadmap

import (
	"context"
	"errors"
	"io"
	"iter"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

// Event is one event of a watch, as the daemon sent it, plus Resync.
type Event struct {
	// ADDED (in the snapshot, or created later), MODIFIED, DELETED, or
	// SYNCED: the snapshot is complete. The daemon sends SYNCED again after
	// each resumption, once the events missed meanwhile are delivered.
	Type workloadmapv1.WorkloadEvent_Type
	// The daemon's revision of the event. Revisions of the events after the
	// first SYNCED increase; those of the snapshot's ADDED events are the
	// revisions at which each workload last changed.
	Revision uint64
	// The workload; for DELETED its last resolved state; nil for SYNCED.
	Workload *workloadmapv1.ResolvedWorkload
	// Resync is set on the first event of a new snapshot that replaces
	// everything delivered before: the daemon could not resume the watch
	// (it restarted, or the watch was away longer than its history) or the
	// watch broke during a snapshot. Drop the workloads you hold, then
	// apply this event and the ADDED events up to the next SYNCED.
	Resync bool
}

// WatchOption configures Watch.
type WatchOption func(*watchOptions)

type watchOptions struct {
	backoffBase time.Duration
	backoffMax  time.Duration
	onRetry     func(err error, wait time.Duration)
}

// WithBackoff sets the wait before reconnecting a broken watch: base after
// the first failure, doubling with each failure in a row up to limit, with
// jitter; a watch that received an event starts again from base. The
// default is 250 ms up to 10 s.
func WithBackoff(base, limit time.Duration) WatchOption {
	return func(o *watchOptions) { o.backoffBase, o.backoffMax = base, limit }
}

// WithRetryNotify calls notify each time the watch reconnects, with the
// error that ended the stream (a gRPC status error, or io.EOF for a stream
// the daemon closed without one) and the wait before the next attempt.
// It runs on the goroutine iterating over the watch.
func WithRetryNotify(notify func(err error, wait time.Duration)) WatchOption {
	return func(o *watchOptions) { o.onRetry = notify }
}

// Watch yields the workloads req selects, then their changes, until ctx is
// done or the loop over the iterator stops: ADDED for each workload of the
// snapshot, SYNCED, then ADDED, MODIFIED and DELETED as workloads change.
// With req.ResumeRevision set (the Revision of an event received before),
// it starts after that event instead, without a snapshot. req is not
// modified; a nil req watches everything.
//
// Watch keeps the stream going: when it ends with Unavailable (the daemon
// is unreachable or restarting), ResourceExhausted (the consumer fell
// behind the daemon's --watch-queue-size), Aborted, Internal, a
// cancellation or deadline that is not ctx's, or without an error, Watch
// reconnects after a backoff and resumes after the last event it yielded,
// so no event is lost or repeated. The daemon names that same revision in
// the wm-resume-revision trailer of a ResourceExhausted; the last event
// yielded is the one that is known to have arrived. When the daemon no
// longer has that revision (OutOfRange: it restarted, or the watch was away
// too long) Watch starts over with a snapshot and sets Event.Resync.
//
// Any other error (InvalidArgument for a bad filter, NotFound for an
// unknown cluster, ...) is yielded once, as is ctx's end (Canceled or
// DeadlineExceeded), and the iteration stops.
//
//	for ev, err := range client.Watch(ctx, &workloadmapv1.WatchWorkloadsRequest{Namespace: "ml"}) {
//		if err != nil {
//			return err
//		}
//		if ev.Resync {
//			clear(workloads)
//		}
//		switch ev.Type {
//		case workloadmapv1.WorkloadEvent_ADDED, workloadmapv1.WorkloadEvent_MODIFIED:
//			workloads[ev.Workload.GetRef().GetName()] = ev.Workload
//		case workloadmapv1.WorkloadEvent_DELETED:
//			delete(workloads, ev.Workload.GetRef().GetName())
//		}
//	}
func (c *Client) Watch(ctx context.Context, req *workloadmapv1.WatchWorkloadsRequest, opts ...WatchOption) iter.Seq2[Event, error] {
	o := watchOptions{backoffBase: 250 * time.Millisecond, backoffMax: 10 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		streamReq := &workloadmapv1.WatchWorkloadsRequest{}
		if req != nil {
			streamReq = proto.CloneOf(req)
		}
		r := newResumer(streamReq.GetResumeRevision())
		failures := 0
		for {
			streamReq.ResumeRevision = r.start()
			err := c.stream(ctx, streamReq, func(ev *workloadmapv1.WorkloadEvent) bool {
				failures = 0
				return yield(r.event(ev), nil)
			})
			if errors.Is(err, errStopped) {
				return
			}
			if ctx.Err() != nil {
				yield(Event{}, status.FromContextError(ctx.Err()).Err())
				return
			}
			action := r.end(err)
			if action == stop {
				yield(Event{}, err)
				return
			}
			var wait time.Duration
			if action == retryAfterBackoff {
				wait = backoff(o.backoffBase, o.backoffMax, failures)
				failures++
			}
			if o.onRetry != nil {
				o.onRetry(err, wait)
			}
			if !sleep(ctx, wait) {
				yield(Event{}, status.FromContextError(ctx.Err()).Err())
				return
			}
		}
	}
}

// errStopped: the consumer stopped the iteration.
var errStopped = errors.New("watch stopped by the consumer")

// stream runs one WatchWorkloads stream, handing each event to handle, and
// returns the error that ended it: io.EOF when the daemon closed it without
// one, errStopped when handle returned false.
func (c *Client) stream(ctx context.Context, req *workloadmapv1.WatchWorkloadsRequest, handle func(*workloadmapv1.WorkloadEvent) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.api.WatchWorkloads(ctx, req)
	if err != nil {
		return err
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			return err
		}
		if !handle(ev) {
			return errStopped
		}
	}
}

// resumer follows a watch's position across streams: which revision the
// next stream resumes after, and whether it replaces what the consumer
// holds with a new snapshot.
type resumer struct {
	// resume_revision of the next stream; 0 asks for a snapshot.
	from uint64
	// The current stream started with a snapshot that has not reached
	// SYNCED: its ADDED events carry no revision to resume after.
	inSnapshot bool
	// The consumer holds workloads from earlier events (or from before the
	// watch, when it started at a resume revision).
	holdsState bool
	// The next event yielded starts a snapshot replacing that state.
	resync bool
}

func newResumer(resumeRevision uint64) *resumer {
	return &resumer{from: resumeRevision, holdsState: resumeRevision != 0}
}

// start returns the resume revision of the next stream.
func (r *resumer) start() uint64 {
	r.inSnapshot = r.from == 0
	return r.from
}

// event records an event received, returned as the consumer sees it.
func (r *resumer) event(ev *workloadmapv1.WorkloadEvent) Event {
	out := Event{Type: ev.GetType(), Revision: ev.GetRevision(), Workload: ev.GetWorkload(), Resync: r.resync}
	r.resync = false
	r.holdsState = true
	switch {
	case ev.GetType() == workloadmapv1.WorkloadEvent_SYNCED:
		// The daemon's revision when the stream started: every later
		// change comes after it, so it is a resume point even when the
		// filter selected no event.
		r.inSnapshot = false
		r.from = ev.GetRevision()
	case !r.inSnapshot:
		// After SYNCED, and in the backlog of a resumed stream, events
		// come in revision order.
		r.from = ev.GetRevision()
	}
	return out
}

type endAction int

const (
	stop endAction = iota
	retryNow
	retryAfterBackoff
)

// end decides what follows a stream that ended with err (io.EOF for an end
// without error), when ctx is still live.
func (r *resumer) end(err error) endAction {
	code := status.Code(err)
	if errors.Is(err, io.EOF) {
		code = codes.Unavailable
	}
	switch code {
	case codes.OutOfRange:
		if r.from == 0 {
			return stop // not about a resume revision
		}
		// The daemon no longer has r.from: start over with a snapshot.
		r.from = 0
		r.resync = r.holdsState
		return retryNow
	case codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.Internal,
		codes.Canceled, codes.DeadlineExceeded:
		if r.inSnapshot {
			// A snapshot cut short is taken again whole.
			r.resync = r.holdsState
		}
		return retryAfterBackoff
	}
	return stop
}

// backoff is the wait after failures failures in a row: base doubling up to
// limit, then a random part of it between half and all, so that clients cut
// off together do not reconnect together.
func backoff(base, limit time.Duration, failures int) time.Duration {
	d := base
	for i := 0; i < failures && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d/2 + rand.N(d/2+1)
}

// sleep waits for d or until ctx is done, and reports whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
