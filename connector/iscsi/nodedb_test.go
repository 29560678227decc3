package iscsi

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestNodeDBLock: iscsiadm -o new / -o delete and brick's record edits run
// with the node database lock held exclusively (another process could not
// even share it), login and logout with it shared (others may share it,
// nobody may take it exclusively). 8 parallel local-detaches failed
// without it.
func TestNodeDBLock(t *testing.T) {
	p, err := ParsePortal("10.0.2.2:3260")
	require.NoError(t, err)
	const iqn = "iqn.2010-10.org.openstack:volume-1"
	var h *host.Host
	probe := func(ctx context.Context) (shared, exclusive bool) {
		short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		if u, err := h.Locks.LockShared(short, nodeDBLock); err == nil {
			shared = true
			u()
		}
		short2, cancel2 := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel2()
		if u, err := h.Locks.Lock(short2, nodeDBLock); err == nil {
			exclusive = true
			u()
		}
		return shared, exclusive
	}
	type seen struct{ shared, exclusive bool }
	got := map[string]seen{}
	r := hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		s, x := probe(ctx)
		got[hosttest.Arg(t, cmd, -1)] = seen{s, x}
		return host.Result{}, nil
	})
	h, _ = hosttest.New(t, r)
	adm := iscsiadm{runner: r, fs: h.FS, locks: h.Locks, commandTimeout: time.Second, loginTimeout: time.Second}
	ctx := context.Background()
	require.NoError(t, adm.newNode(ctx, iqn, p, IfaceTCP))
	_, err = adm.login(ctx, iqn, p, IfaceTCP)
	require.NoError(t, err)
	require.NoError(t, adm.logout(ctx, iqn, p, IfaceTCP))
	require.NoError(t, adm.deleteNode(ctx, iqn, p, IfaceTCP))
	require.Equal(t, map[string]seen{
		"new":      {},
		"--login":  {shared: true},
		"--logout": {shared: true},
		"delete":   {},
	}, got)

	// A record edit waits for whoever holds the lock, then writes.
	file := "/etc/iscsi/nodes/" + iqn + "/" + p.String() + ",1/default"
	require.NoError(t, os.MkdirAll(filepath.Dir(h.FS.Path(file)), 0o700))
	require.NoError(t, os.WriteFile(h.FS.Path(file), []byte("node.name = "+iqn+"\n"), 0o600))
	unlock, err := h.Locks.Lock(ctx, nodeDBLock)
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.Error(t, adm.editRecordLocked(short, file, nodeSettings(nil, IfaceTCP, 5)), "an edit waits for a holder of the lock")
	unlock()
	require.NoError(t, adm.editRecordLocked(ctx, file, nodeSettings(nil, IfaceTCP, 5)))
	data, err := h.FS.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), "node.session.initial_login_retry_max = 1")
}
