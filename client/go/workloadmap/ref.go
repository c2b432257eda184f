package workloadmap

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

// Ref names an object for Resolve and Gang. typ is, as in kubectl and
// wmctl, a Kind ("JobSet") or a resource, plural or singular ("jobsets",
// "jobset"), optionally followed by ".GROUP" ("jobsets.jobset.x-k8s.io")
// when several groups have that kind. A Kind starts with an upper-case
// letter. An empty namespace is the daemon's "default".
func Ref(namespace, typ, name string) *workloadmapv1.ObjectRef {
	ref := &workloadmapv1.ObjectRef{Namespace: namespace, Name: name}
	head, group, _ := strings.Cut(typ, ".")
	ref.Group = group
	if head != "" && head[0] >= 'A' && head[0] <= 'Z' {
		ref.Kind = head
	} else {
		ref.Resource = head
	}
	return ref
}

// ParseRef reads "TYPE/NAME" ("jobset/demo", "JobSet.jobset.x-k8s.io/demo")
// into a reference in namespace; TYPE is as in Ref. A malformed reference
// is an InvalidArgument error.
func ParseRef(namespace, typeName string) (*workloadmapv1.ObjectRef, error) {
	typ, name, ok := strings.Cut(typeName, "/")
	if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
		return nil, status.Errorf(codes.InvalidArgument, "%q is not TYPE/NAME (e.g. jobset/demo)", typeName)
	}
	return Ref(namespace, typ, name), nil
}
