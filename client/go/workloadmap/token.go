package workloadmap

import (
	"context"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ServiceAccountTokenFile is where the kubelet mounts a pod's ServiceAccount
// token: WithTokenFile(ServiceAccountTokenFile) authenticates an in-cluster
// caller as its ServiceAccount. A token projected for the daemon's audience
// (a serviceAccountToken volume with audience "workloadmap") is better: it
// is good for the daemon only, not for the apiserver.
const ServiceAccountTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// WithBearerToken sends token as "authorization: Bearer <token>" with every
// call, for a daemon run with --authentication=kubernetes, which reviews it
// with the cluster (TokenReview). The token is sent on plaintext
// connections too: use TLS (WithTLS, WithTLSFiles) or a Unix socket
// wherever others share the network.
func WithBearerToken(token string) Option {
	return func(o *dialOptions) { o.token = &bearerToken{static: token} }
}

// WithTokenFile sends the token held in path (surrounding whitespace
// trimmed) with every call, re-read when the file changes, since the kubelet
// rotates projected tokens. A call fails with Unauthenticated, naming the
// file, when it cannot be read.
func WithTokenFile(path string) Option {
	return func(o *dialOptions) { o.token = &bearerToken{file: path} }
}

// bearerToken is grpc-go's per-call credentials for a bearer token.
type bearerToken struct {
	static string
	file   string

	mu       sync.Mutex
	modTime  time.Time
	size     int64
	fromFile string
}

func (t *bearerToken) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	token := t.static
	if t.file != "" {
		var err error
		if token, err = t.read(); err != nil {
			return nil, status.Errorf(codes.Unauthenticated, "workloadmap token file: %v", err)
		}
	}
	return map[string]string{"authorization": "Bearer " + token}, nil
}

// RequireTransportSecurity is false: the daemon's Unix sockets and local
// listeners are plaintext, and its callers decide what their network is.
func (t *bearerToken) RequireTransportSecurity() bool { return false }

func (t *bearerToken) read() (string, error) {
	info, err := os.Stat(t.file)
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fromFile != "" && info.ModTime().Equal(t.modTime) && info.Size() == t.size {
		return t.fromFile, nil
	}
	data, err := os.ReadFile(t.file)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", status.Errorf(codes.Unauthenticated, "%s is empty", t.file)
	}
	t.fromFile, t.modTime, t.size = token, info.ModTime(), info.Size()
	return token, nil
}

// explainAccessErrors adds what to do to the daemon's Unauthenticated
// answers when the client sends no token: the daemon says why it refused,
// not how this client is configured.
func explainAccessErrors(hasToken bool) []grpc.DialOption {
	explain := func(err error) error {
		if hasToken || status.Code(err) != codes.Unauthenticated {
			return err
		}
		return status.Errorf(codes.Unauthenticated,
			"%s (the daemon authenticates its callers: dial with WithTokenFile or WithBearerToken)",
			status.Convert(err).Message())
	}
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
			cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return explain(invoker(ctx, method, req, reply, cc, opts...))
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc,
			cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			stream, err := streamer(ctx, desc, cc, method, opts...)
			if err != nil {
				return nil, explain(err)
			}
			return &explainedStream{ClientStream: stream, explain: explain}, nil
		}),
	}
}

type explainedStream struct {
	grpc.ClientStream
	explain func(error) error
}

func (s *explainedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil {
		return nil
	}
	return s.explain(err)
}
