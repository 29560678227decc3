package iscsi_test

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/host/hosttest"
)

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeResolver answers from a table; a name it lacks fails as DNS would,
// and a name mapped to nil blocks until the lookup's deadline.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]string
	asked   []string
}

func (f *fakeResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	f.asked = append(f.asked, host)
	ans, ok := f.answers[host]
	f.mu.Unlock()
	if !ok {
		return nil, errors.New("no such host")
	}
	if ans == nil {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var out []netip.Addr
	for _, a := range ans {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// TestConnectResolvesPortalHostName: a portal given as host:port attaches
// through the address the name resolves to; the log names both.
func TestConnectResolvesPortalHostName(t *testing.T) {
	fk, r, h := newFakeKernel(t)
	fk.luns = map[int]string{1: fk.luns[1]}
	logs := &syncBuffer{}
	h.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := fastOptions()
	res := &fakeResolver{answers: map[string][]string{"san-a.example.com": {"::ffff:127.0.0.1"}}}
	opts.Resolver = res
	c := iscsi.New(h, opts)
	ci := connInfo(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"SAN-A.example.com.:3260","target_iqn":"`+tgtIQN+`","target_lun":1}}`)

	dev, err := c.Connect(context.Background(), ci)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:3260", dev.Extra[iscsi.ExtraTargetPortal])
	require.Equal(t, []string{"san-a.example.com"}, res.asked)
	require.Contains(t, logs.String(), "san-a.example.com")
	require.Contains(t, logs.String(), "addresses=127.0.0.1")
	for _, call := range r.Calls() {
		require.NotContains(t, call, "example.com", "no command sees the name")
	}
	require.NoError(t, c.Disconnect(context.Background(), ci, dev, connector.DisconnectOptions{}))
	sessions, records, disks := fk.state()
	require.Zero(t, sessions)
	require.Zero(t, records)
	require.Empty(t, disks)
}

// TestConnectUsesEveryAddress: with multipath, a name with two addresses
// is two paths; a single path tries them in the resolver's order.
func TestConnectUsesEveryAddress(t *testing.T) {
	fk, _, h := newFakeKernel(t)
	hosttest.WriteFile(t, fk.root, "/proc/42/comm", "multipathd\n")
	fk.luns = map[int]string{1: fk.luns[1]}
	opts := fastOptions()
	opts.Multipath = true
	opts.NoPortalCheck = true
	opts.Resolver = &fakeResolver{answers: map[string][]string{"san": {"127.0.0.1", "127.0.0.2", "127.0.0.1"}}}
	c := iscsi.New(h, opts)
	ci := connInfo(t, `{"driver_volume_type":"iscsi","target_portals":["san:3260"],"target_iqns":["`+tgtIQN+`"],"target_luns":[1]}`)
	dev, err := c.Connect(context.Background(), ci)
	require.NoError(t, err)
	require.Equal(t, "/dev/dm-0", dev.Path)
	require.Len(t, dev.Paths, 2, "both addresses, the repeated one once")
	require.NoError(t, c.Disconnect(context.Background(), ci, dev, connector.DisconnectOptions{}))
	sessions, _, _ := fk.state()
	require.Zero(t, sessions)
}

// TestConnectNameResolutionFails: an unknown name and a lookup that hangs
// both fail the connect within the bound, naming the portal, and run
// nothing.
func TestConnectNameResolutionFails(t *testing.T) {
	_, r, h := newFakeKernel(t)
	opts := slowOptions() // every other bound far above the one checked
	opts.Resolver = &fakeResolver{answers: map[string][]string{"slow.example.com": nil}}
	opts.ResolveTimeout = 100 * time.Millisecond
	c := iscsi.New(h, opts)
	for _, name := range []string{"nowhere.example.com", "slow.example.com"} {
		start := time.Now()
		_, err := c.Connect(context.Background(), connInfo(t, `{"driver_volume_type":"iscsi","data":{"target_portal":"`+name+`","target_iqn":"`+tgtIQN+`","target_lun":1}}`))
		require.Error(t, err)
		require.Contains(t, err.Error(), name+":3260")
		require.Less(t, time.Since(start), 10*time.Second, "the resolve timeout, not another")
	}
	require.Empty(t, r.Calls())
}
