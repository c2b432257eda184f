// Package workloadmap is a Go client of workloadmapd, the Workload Map
// resolution service: it asks the daemon what an AI workload on Kubernetes
// is (its components, replicas, pods, resources, status and gang) instead
// of parsing each framework's custom resources.
//
// Dial connects to the daemon over TCP ("host:port") or a Unix socket
// ("unix:PATH", "unix:///abs/path"), plaintext unless WithTLS or
// WithTLSFiles is given. The Client has typed methods for the common calls:
//
//   - Resolve: one workload by reference (Ref, ParseRef);
//   - List: every workload matching a filter, reading the pages as the
//     iteration goes;
//   - Watch: a snapshot of the workloads, a SYNCED marker, then their changes,
//     resumed after disconnections and daemon restarts;
//   - Gang: the PodGroup a pod belongs to;
//   - Health: the daemon's serving status.
//
// Summarize condenses a resolved workload into its ListWorkloads row
// (components with replica counts and GPUs), and GPUs counts the GPUs of a
// resource list.
//
// The other RPCs (MutatePodSpecs, ListDefinitions, ValidateDefinition) are
// on the generated stub that Client.API returns; the messages are in
// package workloadmapv1.
//
// # Errors
//
// Every error a Client method returns is a gRPC status error: inspect it
// with status.Code from google.golang.org/grpc/status. The daemon returns
// NotFound (no such object or cluster), FailedPrecondition (no definition
// covers the kind, or two do), InvalidArgument (the message names the
// field), Unavailable (the daemon is unreachable, or has not synced that
// kind yet: retry), DeadlineExceeded and Canceled (from the context),
// ResourceExhausted and OutOfRange (watches: Watch handles both itself).
//
// # Example
//
//	ctx := context.Background()
//	client, err := workloadmap.Dial(ctx, "127.0.0.1:50051")
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer client.Close()
//	w, err := client.Resolve(ctx, workloadmap.Ref("default", "jobset", "demo"))
//	if status.Code(err) == codes.NotFound {
//		log.Fatal("no such workload")
//	} else if err != nil {
//		log.Fatal(err)
//	}
//	s := workloadmap.Summarize(w) // the row ListWorkloads would return
//	fmt.Println(s.GetMatchedStatuses(), "GPUs:", s.GetGpus())
//	for _, c := range s.GetComponents() {
//		fmt.Println(c.GetInstanceId(), c.GetReplicas().GetReady(), "/", c.GetReplicas().GetDesired())
//	}
package workloadmap
