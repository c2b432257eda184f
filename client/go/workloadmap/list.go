package workloadmap

import (
	"context"
	"iter"

	"google.golang.org/protobuf/proto"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

// List yields every top-level workload that filter selects, newest first,
// reading one page of filter.PageSize workloads at a time (0: the daemon's
// default of 100; at most its --max-page-size) as the iteration goes, from
// filter.PageToken (empty: the first page). A nil filter lists every
// workload of every cluster and namespace. filter is not modified.
//
// On an error List yields it once (with a nil summary) and stops: the
// daemon's InvalidArgument for a bad filter or page token, NotFound for an
// unknown cluster, or the connection's error. Workloads created or deleted
// while the pages are read may be missed or listed after a later page, as
// with any paged list.
//
//	for w, err := range client.List(ctx, &workloadmapv1.ListWorkloadsRequest{Namespace: "ml"}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(w.GetRef().GetName(), w.GetPhase())
//	}
func (c *Client) List(ctx context.Context, filter *workloadmapv1.ListWorkloadsRequest) iter.Seq2[*workloadmapv1.WorkloadSummary, error] {
	return func(yield func(*workloadmapv1.WorkloadSummary, error) bool) {
		req := &workloadmapv1.ListWorkloadsRequest{}
		if filter != nil {
			req = proto.CloneOf(filter)
		}
		fetch := func(token string) (*workloadmapv1.ListWorkloadsResponse, error) {
			req.PageToken = token
			return c.api.ListWorkloads(ctx, req)
		}
		for w, err := range pages(req.GetPageToken(), fetch) {
			if !yield(w, err) {
				return
			}
		}
	}
}

// pages yields the workloads of the pages fetch returns, from the page of
// token on, until a page without a next page token or the first error.
func pages(token string, fetch func(token string) (*workloadmapv1.ListWorkloadsResponse, error)) iter.Seq2[*workloadmapv1.WorkloadSummary, error] {
	return func(yield func(*workloadmapv1.WorkloadSummary, error) bool) {
		for {
			resp, err := fetch(token)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, w := range resp.GetWorkloads() {
				if !yield(w, nil) {
					return
				}
			}
			token = resp.GetNextPageToken()
			if token == "" {
				return
			}
		}
	}
}
