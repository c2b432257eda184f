package workloadmap

import (
	"testing"

	"google.golang.org/protobuf/proto"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

func resources(q map[string]int64) *workloadmapv1.ResourceList {
	return &workloadmapv1.ResourceList{Quantities: q}
}

func counts(desired, current, ready int32) *workloadmapv1.ReplicaCounts {
	return &workloadmapv1.ReplicaCounts{Desired: desired, Current: current, Ready: ready}
}

func TestGPUs(t *testing.T) {
	got := GPUs(resources(map[string]int64{"nvidia.com/gpu": 8, "amd.com/gpu": 2, "cpu": 4000, "nvidia.com/gpu-memory": 80}))
	if got != 10 {
		t.Errorf("GPUs = %d, want 10", got)
	}
	if got := GPUs(nil); got != 0 {
		t.Errorf("GPUs(nil) = %d", got)
	}
}

// A grouping root with two instances ("a", "b"), each with a pod-bearing
// "worker" component of one instance "", and a second pod-bearing level
// below "a": the rows are per (component, instance), summed over parents.
func TestSummarize(t *testing.T) {
	worker := func(desired, ready int32, gpus int64, children ...*workloadmapv1.Component) *workloadmapv1.Component {
		return &workloadmapv1.Component{
			Name: "worker", HasPodDefinition: true,
			Instances: []*workloadmapv1.ComponentInstance{{
				Replicas:  counts(desired, desired, ready),
				Resources: resources(map[string]int64{"nvidia.com/gpu": gpus}),
				Children:  children,
			}},
		}
	}
	sidecar := &workloadmapv1.Component{
		Name: "sidecar", HasPodDefinition: true,
		Instances: []*workloadmapv1.ComponentInstance{
			{Id: "x", Replicas: counts(1, 1, 0)},
			{Id: "y", Replicas: counts(2, 1, 1), Resources: resources(map[string]int64{"amd.com/gpu": 2})},
		},
	}
	w := &workloadmapv1.ResolvedWorkload{
		Ref:        &workloadmapv1.ObjectRef{Namespace: "ml", Kind: "Grouped", Name: "g"},
		Definition: &workloadmapv1.DefinitionRef{Name: "grouped", Origin: "file"},
		Status:     &workloadmapv1.WorkloadStatus{Phase: "Up", MatchedStatuses: []string{"Running"}},
		Root: &workloadmapv1.Component{
			Name: "root",
			Instances: []*workloadmapv1.ComponentInstance{
				{Id: "a", Children: []*workloadmapv1.Component{worker(2, 2, 8, sidecar)}},
				{Id: "b", Children: []*workloadmapv1.Component{worker(3, 1, 12)}},
			},
		},
		Resources:         resources(map[string]int64{"nvidia.com/gpu": 20, "amd.com/gpu": 2}),
		CreationTimestamp: "2026-11-30T12:00:00Z",
	}
	want := &workloadmapv1.WorkloadSummary{
		Ref:             w.Ref,
		Definition:      "grouped",
		Phase:           "Up",
		MatchedStatuses: []string{"Running"},
		Components: []*workloadmapv1.ComponentSummary{
			{Name: "worker", Replicas: counts(5, 5, 3), Gpus: 20},
			{Name: "sidecar", InstanceId: "x", Replicas: counts(1, 1, 0)},
			{Name: "sidecar", InstanceId: "y", Replicas: counts(2, 1, 1), Gpus: 2},
		},
		Gpus:              22,
		CreationTimestamp: "2026-11-30T12:00:00Z",
	}
	got := Summarize(w)
	if !proto.Equal(got, want) {
		t.Errorf("Summarize =\n%v\nwant\n%v", got, want)
	}
	got.Ref.Name = "changed"
	if w.Ref.Name != "g" {
		t.Error("Summarize shares the reference with the workload")
	}
}
