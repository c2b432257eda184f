package workloadmap

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

// fakePages serves names in pages of size, with tokens "p1", "p2", ...,
// fails with Unavailable at token failAt (if set), and records the tokens
// asked for.
type fakePages struct {
	names  []string
	size   int
	failAt string
	asked  []string
}

func (f *fakePages) fetch(token string) (*workloadmapv1.ListWorkloadsResponse, error) {
	f.asked = append(f.asked, token)
	if f.failAt != "" && token == f.failAt {
		return nil, status.Error(codes.Unavailable, "down")
	}
	page := 0
	if token != "" {
		page = int(token[1] - '0')
	}
	resp := &workloadmapv1.ListWorkloadsResponse{}
	for _, name := range f.names[min(page*f.size, len(f.names)):min((page+1)*f.size, len(f.names))] {
		resp.Workloads = append(resp.Workloads, &workloadmapv1.WorkloadSummary{Ref: &workloadmapv1.ObjectRef{Name: name}})
	}
	if (page+1)*f.size < len(f.names) {
		resp.NextPageToken = "p" + string(rune('0'+page+1))
	}
	return resp, nil
}

func collect(t *testing.T, f *fakePages, start string, limit int) ([]string, error) {
	t.Helper()
	var names []string
	for w, err := range pages(start, f.fetch) {
		if err != nil {
			return names, err
		}
		names = append(names, w.GetRef().GetName())
		if len(names) == limit {
			break
		}
	}
	return names, nil
}

func TestPagesReadsEveryPage(t *testing.T) {
	f := &fakePages{names: []string{"a", "b", "c", "d", "e"}, size: 2}
	names, err := collect(t, f, "", -1)
	if err != nil || !slices.Equal(names, f.names) {
		t.Errorf("pages = %v, %v; want %v", names, err, f.names)
	}
	if want := []string{"", "p1", "p2"}; !slices.Equal(f.asked, want) {
		t.Errorf("tokens asked %q, want %q", f.asked, want)
	}
}

func TestPagesStartsAtToken(t *testing.T) {
	f := &fakePages{names: []string{"a", "b", "c", "d", "e"}, size: 2}
	names, err := collect(t, f, "p1", -1)
	if want := []string{"c", "d", "e"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("pages from p1 = %v, %v; want %v", names, err, want)
	}
}

func TestPagesEmpty(t *testing.T) {
	f := &fakePages{size: 2}
	names, err := collect(t, f, "", -1)
	if err != nil || len(names) != 0 || len(f.asked) != 1 {
		t.Errorf("pages of nothing = %v, %v after %d calls", names, err, len(f.asked))
	}
}

func TestPagesStopsAtError(t *testing.T) {
	f := &fakePages{names: []string{"a", "b", "c", "d", "e"}, size: 2, failAt: "p1"}
	names, err := collect(t, f, "", -1)
	if status.Code(err) != codes.Unavailable || !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("pages = %v, %v; want a, b then Unavailable", names, err)
	}
	if len(f.asked) != 2 {
		t.Errorf("fetched %d pages after the error", len(f.asked)-2)
	}
}

func TestPagesStopsWhenTheConsumerDoes(t *testing.T) {
	f := &fakePages{names: []string{"a", "b", "c", "d", "e"}, size: 2}
	names, _ := collect(t, f, "", 3)
	if !slices.Equal(names, []string{"a", "b", "c"}) || len(f.asked) != 2 {
		t.Errorf("pages = %v after %d fetches; want 3 names after 2", names, len(f.asked))
	}
}
