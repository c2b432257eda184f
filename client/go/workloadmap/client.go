package workloadmap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	workloadmapv1 "github.com/workloadmap/workloadmap/client/go/workloadmapv1"
)

// ServiceName is the gRPC service of the daemon, as grpc.health.v1 names it.
const ServiceName = "workloadmap.v1.WorkloadMap"

// maxMessageBytes matches the daemon's default --max-message-bytes: a
// resolved workload with all its pods can exceed grpc-go's 4 MiB default.
const maxMessageBytes = 16 << 20

// keepaliveTime is how often an idle connection is pinged, so that a watch
// notices a daemon that vanished without closing the connection. The daemon
// disconnects clients pinging more often than its
// --keepalive-min-ping-interval (10 s by default).
const keepaliveTime = 30 * time.Second

// Option configures Dial.
type Option func(*dialOptions)

type dialOptions struct {
	tlsConfig *tls.Config
	caFile    string
	certFile  string
	keyFile   string
	lazy      bool
	token     *bearerToken
	extra     []grpc.DialOption
}

// WithTLS connects with TLS using config (set Certificates for mutual
// TLS). The daemon serves TLS on TCP listeners only; its Unix sockets are
// plaintext.
func WithTLS(config *tls.Config) Option {
	return func(o *dialOptions) { o.tlsConfig = config }
}

// WithTLSFiles connects with TLS, verifying the daemon's certificate with
// the PEM CA bundle caFile (the system roots when empty), and presenting the
// client certificate certFile with its key keyFile when both are given
// (mutual TLS). The files are read by Dial.
func WithTLSFiles(caFile, certFile, keyFile string) Option {
	return func(o *dialOptions) { o.caFile, o.certFile, o.keyFile = caFile, certFile, keyFile }
}

// WithLazyConnect makes Dial return without contacting the daemon; the
// connection is made by the first call. Without it, Dial checks that the
// daemon answers.
func WithLazyConnect() Option {
	return func(o *dialOptions) { o.lazy = true }
}

// WithDialOptions adds grpc-go dial options (interceptors, a user agent,
// other keepalive parameters...), applied after the client's own.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *dialOptions) { o.extra = append(o.extra, opts...) }
}

// Client is a connection to workloadmapd. It is safe for concurrent use;
// Close it when done.
type Client struct {
	conn   *grpc.ClientConn
	api    workloadmapv1.WorkloadMapClient
	health healthpb.HealthClient
}

// Dial connects to the daemon at address: "HOST:PORT", "unix:PATH" or
// "unix:///ABS/PATH" (the syntax of workloadmapd's --listen and wmctl's
// --address). The connection is plaintext unless WithTLS or WithTLSFiles is
// given.
//
// Unless WithLazyConnect is given, Dial waits until the daemon answers a
// health check (whatever its serving status) or ctx is done, and fails with
// the call's error: Unavailable when nothing listens at address or the TLS
// handshake fails. A bad address is InvalidArgument. Once dialed, the
// client reconnects by itself when the connection breaks.
func Dial(ctx context.Context, address string, opts ...Option) (*Client, error) {
	var o dialOptions
	for _, opt := range opts {
		opt(&o)
	}
	ep, err := parseAddress(address)
	if err != nil {
		return nil, err
	}
	creds, err := o.credentials()
	if err != nil {
		return nil, err
	}
	target, dialOpts := ep.target()
	dialOpts = append(dialOpts,
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: 10 * time.Second}),
	)
	if o.token != nil {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(o.token))
	}
	dialOpts = append(dialOpts, explainAccessErrors(o.token != nil)...)
	dialOpts = append(dialOpts, o.extra...)
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "workloadmapd address %q: %v", address, err)
	}
	c := &Client{
		conn:   conn,
		api:    workloadmapv1.NewWorkloadMapClient(conn),
		health: healthpb.NewHealthClient(conn),
	}
	if !o.lazy {
		if _, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			conn.Close()
			return nil, status.Errorf(status.Code(err), "workloadmapd at %s: %v", address, status.Convert(err).Message())
		}
	}
	return c, nil
}

func (o *dialOptions) credentials() (credentials.TransportCredentials, error) {
	if o.tlsConfig != nil {
		return credentials.NewTLS(o.tlsConfig), nil
	}
	if o.caFile == "" && o.certFile == "" && o.keyFile == "" {
		return insecure.NewCredentials(), nil
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.caFile != "" {
		pem, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "TLS CA bundle: %v", err)
		}
		config.RootCAs = x509.NewCertPool()
		if !config.RootCAs.AppendCertsFromPEM(pem) {
			return nil, status.Errorf(codes.InvalidArgument, "TLS CA bundle %s holds no PEM certificate", o.caFile)
		}
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return nil, status.Error(codes.InvalidArgument, "a TLS client certificate needs both the certificate and the key file")
	}
	if o.certFile != "" {
		cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "TLS client certificate: %v", err)
		}
		config.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(config), nil
}

// Close closes the connection; calls and watches in progress end with
// Canceled.
func (c *Client) Close() error { return c.conn.Close() }

// API is the generated stub, for the RPCs without a helper here
// (MutatePodSpecs, ListDefinitions, ValidateDefinition) and for requests
// the helpers do not express.
func (c *Client) API() workloadmapv1.WorkloadMapClient { return c.api }

// Conn is the underlying gRPC connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// ResolveOption adjusts a Resolve request.
type ResolveOption func(*workloadmapv1.ResolveWorkloadRequest)

// WithPods lists the pods under their component instances, at most limit
// per instance with unhealthy pods first (0: all). Pod counts are there
// either way.
func WithPods(limit int32) ResolveOption {
	return func(r *workloadmapv1.ResolveWorkloadRequest) {
		r.IncludePods = true
		r.PodLimit = limit
	}
}

// TopOwner resolves the workload at the top of the referenced object's
// controller chain, for a reference to a pod or to a Job of a JobSet.
func TopOwner() ResolveOption {
	return func(r *workloadmapv1.ResolveWorkloadRequest) { r.TopOwner = true }
}

// Resolve returns the workload ref names, as the daemon's cache holds it
// (no evaluation on the daemon's side). Errors: NotFound (no such object,
// or no such cluster), FailedPrecondition (no definition covers its kind),
// InvalidArgument (an incomplete reference), Unavailable (the daemon has
// not synced that kind yet, or is unreachable).
func (c *Client) Resolve(ctx context.Context, ref *workloadmapv1.ObjectRef, opts ...ResolveOption) (*workloadmapv1.ResolvedWorkload, error) {
	req := &workloadmapv1.ResolveWorkloadRequest{Target: &workloadmapv1.ResolveWorkloadRequest_Ref{Ref: ref}}
	for _, opt := range opts {
		opt(req)
	}
	resp, err := c.api.ResolveWorkload(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.GetWorkload(), nil
}

// Gang returns the PodGroup that KAI Scheduler's Workload Map fallback
// would create for pod (namespace and name; the kind may be left empty),
// the pod's group and subgroup, and its top owner. Errors: NotFound (no
// such pod, or its top owner is not a known workload), FailedPrecondition
// (no definition covers the top owner).
func (c *Client) Gang(ctx context.Context, pod *workloadmapv1.ObjectRef) (*workloadmapv1.GetGangInstructionsResponse, error) {
	return c.api.GetGangInstructions(ctx, &workloadmapv1.GetGangInstructionsRequest{
		Target: &workloadmapv1.GetGangInstructionsRequest_Pod{Pod: pod},
	})
}

// Health returns the daemon's grpc.health.v1 status for the WorkloadMap
// service: NOT_SERVING until it has listed and resolved every watched kind
// (and again while it shuts down), then SERVING.
func (c *Client) Health(ctx context.Context) (healthpb.HealthCheckResponse_ServingStatus, error) {
	resp, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{Service: ServiceName})
	if err != nil {
		return healthpb.HealthCheckResponse_UNKNOWN, err
	}
	return resp.GetStatus(), nil
}
