package workloadmap

import (
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

// GPUs adds up the GPU resources of a resource list: every resource name
// ending in "/gpu" (nvidia.com/gpu, amd.com/gpu, ...), as the daemon counts
// them in ListWorkloads.
func GPUs(resources *workloadmapv1.ResourceList) int64 {
	var n int64
	for name, quantity := range resources.GetQuantities() {
		if strings.HasSuffix(name, "/gpu") {
			n += quantity
		}
	}
	return n
}

// Summarize condenses a resolved workload into the row ListWorkloads
// returns for it: one component row per instance of each pod-bearing
// component (a JobSet's "leader" and "worker" replicated jobs), summed over
// the instances of its parents, in tree order, with replica counts and
// GPUs at desired scale. AgeSeconds is left zero.
func Summarize(w *workloadmapv1.ResolvedWorkload) *workloadmapv1.WorkloadSummary {
	row := &workloadmapv1.WorkloadSummary{
		Ref:               proto.CloneOf(w.GetRef()),
		Definition:        w.GetDefinition().GetName(),
		Phase:             w.GetStatus().GetPhase(),
		MatchedStatuses:   slices.Clone(w.GetStatus().GetMatchedStatuses()),
		Gpus:              GPUs(w.GetResources()),
		CreationTimestamp: w.GetCreationTimestamp(),
	}
	collectComponents(w.GetRoot(), row)
	return row
}

func collectComponents(c *workloadmapv1.Component, row *workloadmapv1.WorkloadSummary) {
	for _, instance := range c.GetInstances() {
		if c.GetHasPodDefinition() {
			summary := findComponent(row, c.GetName(), instance.GetId())
			if summary == nil {
				summary = &workloadmapv1.ComponentSummary{
					Name:       c.GetName(),
					InstanceId: instance.GetId(),
					Replicas:   &workloadmapv1.ReplicaCounts{},
				}
				row.Components = append(row.Components, summary)
			}
			summary.Replicas.Desired += instance.GetReplicas().GetDesired()
			summary.Replicas.Current += instance.GetReplicas().GetCurrent()
			summary.Replicas.Ready += instance.GetReplicas().GetReady()
			summary.Gpus += GPUs(instance.GetResources())
		}
		for _, child := range instance.GetChildren() {
			collectComponents(child, row)
		}
	}
}

func findComponent(row *workloadmapv1.WorkloadSummary, name, instance string) *workloadmapv1.ComponentSummary {
	for _, c := range row.GetComponents() {
		if c.GetName() == name && c.GetInstanceId() == instance {
			return c
		}
	}
	return nil
}
