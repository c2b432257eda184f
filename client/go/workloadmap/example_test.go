package workloadmap_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/workloadmap/workloadmap/client/go/workloadmap"
	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

// (These examples need a running daemon, so they are compiled, not run.)

func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Over TCP; "unix:/run/workloadmapd.sock" for the daemon's Unix socket.
	client, err := workloadmap.Dial(ctx, "workloadmapd.kube-system.svc:50051",
		workloadmap.WithTLSFiles("ca.crt", "client.crt", "client.key"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	serving, err := client.Health(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(serving)
}

func ExampleWithTLS() {
	ctx := context.Background()
	client, err := workloadmap.Dial(ctx, "127.0.0.1:50051",
		workloadmap.WithTLS(&tls.Config{ServerName: "workloadmapd", MinVersion: tls.VersionTLS13}))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}

func ExampleClient_Resolve() {
	ctx := context.Background()
	client, err := workloadmap.Dial(ctx, "127.0.0.1:50051")
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	ref, err := workloadmap.ParseRef("default", "jobset/demo")
	if err != nil {
		log.Fatal(err)
	}
	w, err := client.Resolve(ctx, ref)
	if status.Code(err) == codes.NotFound {
		log.Fatalf("no JobSet default/demo")
	} else if err != nil {
		log.Fatal(err)
	}
	s := workloadmap.Summarize(w)
	fmt.Println(s.GetMatchedStatuses(), "GPUs:", s.GetGpus())
	for _, c := range s.GetComponents() {
		fmt.Println(c.GetInstanceId(), c.GetReplicas().GetReady(), "/", c.GetReplicas().GetDesired())
	}
}

func ExampleClient_List() {
	ctx := context.Background()
	client, err := workloadmap.Dial(ctx, "127.0.0.1:50051")
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	filter := &workloadmapv1.ListWorkloadsRequest{Statuses: []string{"Running"}, PageSize: 200}
	for w, err := range client.List(ctx, filter) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(w.GetRef().GetNamespace(), w.GetRef().GetName(), w.GetGpus())
	}
}

func ExampleClient_Watch() {
	ctx := context.Background()
	client, err := workloadmap.Dial(ctx, "unix:/run/workloadmapd.sock")
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	workloads := map[string]*workloadmapv1.ResolvedWorkload{}
	for ev, err := range client.Watch(ctx, &workloadmapv1.WatchWorkloadsRequest{Namespace: "ml"}) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Resync {
			clear(workloads) // a new snapshot follows
		}
		switch ev.Type {
		case workloadmapv1.WorkloadEvent_ADDED, workloadmapv1.WorkloadEvent_MODIFIED:
			workloads[ev.Workload.GetRef().GetName()] = ev.Workload
		case workloadmapv1.WorkloadEvent_DELETED:
			delete(workloads, ev.Workload.GetRef().GetName())
		case workloadmapv1.WorkloadEvent_SYNCED:
			fmt.Println(len(workloads), "workloads, current as of revision", ev.Revision)
		}
	}
}
