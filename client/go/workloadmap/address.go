package workloadmap

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// endpoint is a parsed daemon address.
type endpoint struct {
	// "tcp" or "unix".
	network string
	// HOST:PORT, or the socket's path.
	address string
}

// parseAddress reads a daemon address in the syntax of workloadmapd's
// --listen and wmctl's --address: HOST:PORT (HOST a name, an IPv4 address
// or a bracketed IPv6 address), unix:PATH (absolute or relative) or
// unix:///ABS/PATH.
func parseAddress(address string) (endpoint, error) {
	bad := func(why string) (endpoint, error) {
		return endpoint{}, status.Errorf(codes.InvalidArgument,
			"bad workloadmapd address %q (HOST:PORT, unix:PATH or unix:///ABS/PATH): %s", address, why)
	}
	if rest, ok := strings.CutPrefix(address, "unix:"); ok {
		path := rest
		if after, ok := strings.CutPrefix(rest, "//"); ok {
			// unix://AUTHORITY/PATH: only an empty authority (unix:///ABS/PATH).
			if !strings.HasPrefix(after, "/") {
				return bad("unix:// must be followed by an absolute path (unix:///ABS/PATH)")
			}
			path = after
		}
		if path == "" {
			return bad("no socket path")
		}
		return endpoint{network: "unix", address: path}, nil
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return bad(err.Error())
	}
	if host == "" {
		return bad("no host")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return bad(fmt.Sprintf("port %q is not a number in 1..65535", port))
	}
	return endpoint{network: "tcp", address: address}, nil
}

// target is the gRPC target and the options that reach the endpoint.
func (e endpoint) target() (string, []grpc.DialOption) {
	if e.network == "tcp" {
		return "dns:///" + e.address, nil
	}
	// A Unix socket is dialed directly rather than through grpc-go's
	// "unix:" target, whose URL parsing would misread paths holding '%',
	// '?' or '#'. The authority is what grpc-go sends for its own unix
	// targets.
	path := e.address
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	return "passthrough:///localhost", []grpc.DialOption{
		grpc.WithContextDialer(dial),
		grpc.WithAuthority("localhost"),
	}
}
