package multipath_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

// fakeDaemon plays multipathd's socket: replies by command, or no socket.
type fakeDaemon struct {
	mu      sync.Mutex
	replies map[string]string
	down    bool
	got     []string
}

func (d *fakeDaemon) Command(_ context.Context, cmd string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return "", errors.Join(multipath.ErrNoSocket, errors.New("connection refused"))
	}
	d.got = append(d.got, cmd)
	if r, ok := d.replies[cmd]; ok {
		return r, nil
	}
	return "ok", nil
}

func TestDaemonSocketOrCommand(t *testing.T) {
	tests := []struct {
		name      string
		down      bool
		replies   map[string]string
		wantErr   []bool // add path, del path, disablequeueing
		wantSock  []string
		wantCalls []string
	}{
		{
			name:     "socket answers: no process started",
			wantErr:  []bool{false, false, false},
			wantSock: []string{"add path /dev/sdb", "del path sdb", "disablequeueing map mpatha"},
		},
		{
			name:      "no socket: the multipathd command",
			down:      true,
			wantErr:   []bool{false, false, false},
			wantCalls: []string{"multipathd add path /dev/sdb", "multipathd del path sdb", "multipathd disablequeueing map mpatha"},
		},
		{
			name:     "fail and permission replies are errors",
			replies:  map[string]string{"add path /dev/sdb": "fail", "del path sdb": "permission deny: need to be root", "disablequeueing map mpatha": "fail"},
			wantErr:  []bool{true, true, true},
			wantSock: []string{"add path /dev/sdb", "del path sdb", "disablequeueing map mpatha"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
				return host.Result{Stdout: []byte("ok\n")}, nil
			})
			h, _ := hosttest.New(t, r)
			d := &fakeDaemon{down: tt.down, replies: tt.replies}
			m := multipath.New(h, multipath.Options{Daemon: d})
			ctx := context.Background()
			errs := []error{m.Daemon().AddPath(ctx, "sdb"), m.Daemon().DelPath(ctx, "sdb"), m.Daemon().DisableQueueing(ctx, &multipath.Map{Name: "mpatha"})}
			for i, err := range errs {
				require.Equal(t, tt.wantErr[i], err != nil, "call %d: %v", i, err)
			}
			requireCalls(t, tt.wantSock, d.got)
			requireCalls(t, tt.wantCalls, r.Calls())
		})
	}
}

func TestFlushOverSocket(t *testing.T) {
	tests := []struct {
		name      string
		down      bool
		reply     string
		wantCalls []string
	}{
		{name: "del map ok: no multipath -f", reply: "ok"},
		{name: "del map refused: multipath -f decides", reply: "fail", wantCalls: []string{"multipath -f mpatha"}},
		{name: "no socket: multipath -f", down: true, wantCalls: []string{"multipath -f mpatha"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var root string
			r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
				removeMap(t, root)
				return host.Result{}, nil
			})
			h, rt := hosttest.New(t, r)
			root = rt
			fixtureMap(t, root, "0")
			d := &fakeDaemon{down: tt.down, replies: map[string]string{"del map mpatha": tt.reply}}
			if tt.reply == "ok" {
				// What multipathd does on "del map".
				d.replies = nil
			}
			m := multipath.New(h, multipath.Options{Daemon: &removingDaemon{fakeDaemon: d, remove: func() { removeMap(t, root) }, ok: tt.reply == "ok"}})
			mp, err := m.Maps().MapOf("sdb")
			require.NoError(t, err)
			require.NoError(t, m.Flush(context.Background(), mp))
			requireCalls(t, tt.wantCalls, r.Calls())
		})
	}
}

func requireCalls(t *testing.T, want, got []string) {
	t.Helper()
	if len(want) == 0 {
		require.Empty(t, got)
		return
	}
	require.Equal(t, want, got)
}

// removingDaemon removes the fixture map when "del map" succeeds, as
// multipathd does.
type removingDaemon struct {
	*fakeDaemon
	remove func()
	ok     bool
}

func (d *removingDaemon) Command(ctx context.Context, cmd string) (string, error) {
	reply, err := d.fakeDaemon.Command(ctx, cmd)
	if err == nil && d.ok && cmd == "del map mpatha" {
		d.remove()
	}
	return reply, err
}

// TestRemovalConfirmedInSysfs: an "ok" from whatever answers on
// multipathd's socket (a stale daemon, an impostor) is not proof: a map
// still in sysfs fails the flush, and a forced removal reports it held.
func TestRemovalConfirmedInSysfs(t *testing.T) {
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		return host.Result{}, nil // multipath -f "succeeds" too, removing nothing
	})
	h, root := hosttest.New(t, r)
	fixtureMap(t, root, "0")
	d := &fakeDaemon{}
	m := multipath.New(h, multipath.Options{Daemon: d, FlushTimeout: 300 * time.Millisecond})
	mp, err := m.Maps().MapOf("sdb")
	require.NoError(t, err)
	err = m.Flush(context.Background(), mp)
	require.ErrorContains(t, err, "multipath flush mpatha")
	require.ErrorContains(t, err, "is still there")
	held, err := m.Remove(context.Background(), mp, true)
	require.NoError(t, err)
	require.True(t, held, "forced: the map that stayed is reported held")
}
