// Command watch follows the workloads of a namespace through workloadmapd:
// one line per change, and a table of every workload each time the daemon
// says the view is complete (SYNCED). It survives daemon restarts.
//
//	go run ./examples/watch --address 127.0.0.1:50051 -n default
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"google.golang.org/grpc/status"

	"github.com/workloadmap/workloadmap/client/go/workloadmap"
	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

func main() {
	address := flag.String("address", envOr("WM_ADDRESS", "127.0.0.1:50051"),
		"workloadmapd address: HOST:PORT, unix:PATH or unix:///ABS/PATH (default $WM_ADDRESS)")
	namespace := flag.String("n", "", "namespace to watch (default: all)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Lazy: the daemon may start after this command, the watch waits for it.
	client, err := workloadmap.Dial(ctx, *address, workloadmap.WithLazyConnect())
	if err != nil {
		fail(err)
	}
	defer client.Close()

	workloads := map[string]*workloadmapv1.WorkloadSummary{}
	notify := workloadmap.WithRetryNotify(func(err error, wait time.Duration) {
		fmt.Fprintf(os.Stderr, "watch: %s; reconnecting in %s\n", status.Convert(err).Message(), wait.Round(time.Millisecond))
	})
	for ev, err := range client.Watch(ctx, &workloadmapv1.WatchWorkloadsRequest{Namespace: *namespace}, notify) {
		if err != nil {
			if ctx.Err() != nil {
				return // interrupted
			}
			fail(err)
		}
		if ev.Resync {
			fmt.Println("-- the daemon could not resume the watch: starting over")
			clear(workloads)
		}
		if ev.Type == workloadmapv1.WorkloadEvent_SYNCED {
			printTable(workloads)
			continue
		}
		s := workloadmap.Summarize(ev.Workload)
		key := s.GetRef().GetNamespace() + "/" + s.GetRef().GetKind() + "/" + s.GetRef().GetName()
		if ev.Type == workloadmapv1.WorkloadEvent_DELETED {
			delete(workloads, key)
		} else {
			workloads[key] = s
		}
		fmt.Printf("%-8s %s  %s  revision %d\n", ev.Type, key, line(s), ev.Revision)
	}
}

func line(s *workloadmapv1.WorkloadSummary) string {
	var ready, desired int32
	for _, c := range s.GetComponents() {
		ready += c.GetReplicas().GetReady()
		desired += c.GetReplicas().GetDesired()
	}
	return fmt.Sprintf("%v ready %d/%d GPUs %d", s.GetMatchedStatuses(), ready, desired, s.GetGpus())
}

func printTable(workloads map[string]*workloadmapv1.WorkloadSummary) {
	fmt.Printf("-- %d workloads:\n", len(workloads))
	for _, key := range slices.Sorted(maps.Keys(workloads)) {
		fmt.Printf("   %s  %s\n", key, line(workloads[key]))
	}
}

func fail(err error) {
	st := status.Convert(err)
	fmt.Fprintf(os.Stderr, "watch: %s: %s\n", st.Code(), st.Message())
	os.Exit(1)
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
