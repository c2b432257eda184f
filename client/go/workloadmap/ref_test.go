package workloadmap

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

func TestRef(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want *workloadmapv1.ObjectRef
	}{
		{"JobSet", &workloadmapv1.ObjectRef{Namespace: "ml", Kind: "JobSet", Name: "demo"}},
		{"jobsets", &workloadmapv1.ObjectRef{Namespace: "ml", Resource: "jobsets", Name: "demo"}},
		{"jobset", &workloadmapv1.ObjectRef{Namespace: "ml", Resource: "jobset", Name: "demo"}},
		{"JobSet.jobset.x-k8s.io", &workloadmapv1.ObjectRef{Namespace: "ml", Kind: "JobSet", Group: "jobset.x-k8s.io", Name: "demo"}},
		{"jobsets.jobset.x-k8s.io", &workloadmapv1.ObjectRef{Namespace: "ml", Resource: "jobsets", Group: "jobset.x-k8s.io", Name: "demo"}},
	} {
		if got := Ref("ml", tc.typ, "demo"); !proto.Equal(got, tc.want) {
			t.Errorf("Ref(ml, %q, demo) = %v, want %v", tc.typ, got, tc.want)
		}
	}
}

func TestParseRef(t *testing.T) {
	got, err := ParseRef("ml", "pytorchjob/train")
	want := &workloadmapv1.ObjectRef{Namespace: "ml", Resource: "pytorchjob", Name: "train"}
	if err != nil || !proto.Equal(got, want) {
		t.Errorf("ParseRef(ml, pytorchjob/train) = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", "demo", "jobset/", "/demo", "jobset/demo/x"} {
		if _, err := ParseRef("ml", bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("ParseRef(ml, %q) = %v, want InvalidArgument", bad, err)
		}
	}
}
