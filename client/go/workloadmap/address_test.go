package workloadmap

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestParseAddress(t *testing.T) {
	for _, tc := range []struct {
		address, network, endpoint string
	}{
		{"127.0.0.1:50051", "tcp", "127.0.0.1:50051"},
		{"localhost:1", "tcp", "localhost:1"},
		{"workloadmapd.ml.svc:65535", "tcp", "workloadmapd.ml.svc:65535"},
		{"[::1]:50051", "tcp", "[::1]:50051"},
		{"unix:/run/wm.sock", "unix", "/run/wm.sock"},
		{"unix:wm.sock", "unix", "wm.sock"},
		{"unix:./dir/wm.sock", "unix", "./dir/wm.sock"},
		{"unix:///run/wm.sock", "unix", "/run/wm.sock"},
		{"unix:/tmp/a%20b?c#d.sock", "unix", "/tmp/a%20b?c#d.sock"},
	} {
		got, err := parseAddress(tc.address)
		if err != nil {
			t.Errorf("parseAddress(%q): %v", tc.address, err)
			continue
		}
		if got.network != tc.network || got.address != tc.endpoint {
			t.Errorf("parseAddress(%q) = %s %q, want %s %q", tc.address, got.network, got.address, tc.network, tc.endpoint)
		}
	}
}

func TestParseAddressErrors(t *testing.T) {
	for _, address := range []string{
		"", "localhost", "50051", ":50051", "localhost:", "localhost:0", "localhost:65536",
		"localhost:http", "::1:50051", "unix:", "unix://", "unix://host/run/wm.sock",
	} {
		_, err := parseAddress(address)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("parseAddress(%q) = %v, want InvalidArgument", address, err)
		}
	}
}

func TestTarget(t *testing.T) {
	target, opts := endpoint{network: "tcp", address: "[::1]:50051"}.target()
	if target != "dns:///[::1]:50051" || len(opts) != 0 {
		t.Errorf("tcp target = %q with %d options", target, len(opts))
	}
	target, opts = endpoint{network: "unix", address: "/run/wm.sock"}.target()
	if target != "passthrough:///localhost" || len(opts) != 2 {
		t.Errorf("unix target = %q with %d options, want a dialer and an authority", target, len(opts))
	}
}
