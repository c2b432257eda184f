// Command resolve prints one workload as workloadmapd resolves it: its
// matched statuses and phase, its GPUs and, per component, the ready,
// current and desired replicas and the GPUs at desired scale.
//
//	go run ./examples/resolve --address 127.0.0.1:50051 -n default jobset/demo
//	go run ./examples/resolve --address unix:/run/workloadmapd.sock -n ml pytorchjob/train
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/workloadmap/workloadmap/client/go/workloadmap"
)

func main() {
	address := flag.String("address", envOr("WM_ADDRESS", "127.0.0.1:50051"),
		"workloadmapd address: HOST:PORT, unix:PATH or unix:///ABS/PATH (default $WM_ADDRESS)")
	namespace := flag.String("n", "default", "namespace of the workload")
	timeout := flag.Duration("timeout", 10*time.Second, "deadline of the whole command")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: resolve [--address ADDR] [-n NAMESPACE] TYPE/NAME\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ref, err := workloadmap.ParseRef(*namespace, flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "resolve:", status.Convert(err).Message())
		os.Exit(2)
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	client, err := workloadmap.Dial(ctx, *address)
	if err != nil {
		fail(err)
	}
	defer client.Close()
	w, err := client.Resolve(ctx, ref)
	if err != nil {
		fail(err)
	}

	s := workloadmap.Summarize(w)
	fmt.Printf("%s/%s   namespace: %s   definition: %s\n",
		w.GetRef().GetKind(), w.GetRef().GetName(), w.GetRef().GetNamespace(), s.GetDefinition())
	// The matched statuses (Running, Failed, ...) are the portable summary;
	// the phase is whatever the framework's own status field says, if any.
	fmt.Printf("status: %s", strings.Join(s.GetMatchedStatuses(), ","))
	if s.GetPhase() != "" {
		fmt.Printf("   phase: %s", s.GetPhase())
	}
	fmt.Printf("   GPUs: %d\n", s.GetGpus())
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tREADY\tCURRENT\tDESIRED\tGPUS")
	for _, c := range s.GetComponents() {
		name := c.GetName()
		if c.GetInstanceId() != "" {
			name = c.GetInstanceId()
		}
		r := c.GetReplicas()
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", name, r.GetReady(), r.GetCurrent(), r.GetDesired(), c.GetGpus())
	}
	tw.Flush()
	for _, warning := range w.GetWarnings() {
		fmt.Fprintln(os.Stderr, "warning:", warning)
	}
}

// fail reports a gRPC error and exits: 3 for a workload that does not
// exist (as wmctl), else 1.
func fail(err error) {
	st := status.Convert(err)
	fmt.Fprintf(os.Stderr, "resolve: %s: %s\n", st.Code(), st.Message())
	if st.Code() == codes.NotFound {
		os.Exit(3)
	}
	os.Exit(1)
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
