package attach

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// TestPersistSuspendReconnect is a shutdown and a boot: the host side goes
// and comes back from Cinder's attachment, which never changes; once the
// attachment is deleted in Cinder the volume is not reconnected.
func TestPersistSuspendReconnect(t *testing.T) {
	for _, mv := range []string{"", "3.0"} {
		t.Run("mv="+mv, func(t *testing.T) {
			f := newFixture(t, mv)
			m := f.manager()
			ctx := context.Background()
			rec, err := m.Attach(ctx, AttachOptions{Volume: "data", Persist: true, Mountpoint: "/mnt/data", Mkfs: "ext4"})
			require.NoError(t, err)
			require.True(t, rec.Persist)
			att := rec.AttachmentID

			require.NoError(t, m.Suspend(ctx, volID, SuspendOptions{Unmount: true}))
			require.Zero(t, f.conn.count(), "disconnected")
			require.Empty(t, f.mounts, "unmounted")
			st, n := f.fake.Status(volID)
			require.Equal(t, "in-use", st, "the Cinder attachment stays")
			require.Equal(t, 1, n)
			kept, err := m.Record(volID)
			require.NoError(t, err)
			require.True(t, kept.Persist && kept.Mounted, "the record stays, to mount again")

			rec, err = m.Reconnect(ctx, volID)
			require.NoError(t, err)
			require.Equal(t, att, rec.AttachmentID)
			require.Equal(t, 1, f.conn.count())
			require.Equal(t, "/dev/sdx", f.mounts["/mnt/data"], "mounted again")
			_, err = m.Reconnect(ctx, volID) // idempotent: nothing to do
			require.NoError(t, err)

			require.NoError(t, m.Suspend(ctx, volID, SuspendOptions{Unmount: true}))
			c, err := cinderapi.NewClient(ctx, f.fake.ServiceClient(), "3.44")
			require.NoError(t, err)
			if mv == "" {
				require.NoError(t, attachments.Delete(ctx, c.SC, att).ExtractErr())
			} else {
				require.NoError(t, c.ForceDetach(ctx, volID, att, nil))
			}
			_, err = m.Reconnect(ctx, volID)
			require.ErrorIs(t, err, ErrAttachmentGone)
			require.Zero(t, f.conn.count(), "not reconnected")
			require.NoError(t, m.Suspend(ctx, volID, SuspendOptions{Forget: true}))
			_, err = os.Stat(filepath.Join(f.root, DefaultStateDir, volID+".json"))
			require.True(t, os.IsNotExist(err), "record gone")
		})
	}
}

func TestSuspendRefusesBusyAndHalfDone(t *testing.T) {
	f := newFixture(t, "")
	m := f.manager()
	ctx := context.Background()
	_, err := m.Attach(ctx, AttachOptions{Volume: "data", Mountpoint: "/mnt/data", Mkfs: "ext4"})
	require.NoError(t, err)
	f.conn.disconnectErr = fmt.Errorf("/dev/sdx: %w", host.ErrDeviceBusy)
	err = m.Suspend(ctx, volID, SuspendOptions{Forget: true})
	require.ErrorIs(t, err, ErrInUse)
	_, err = m.Record(volID)
	require.NoError(t, err, "record kept after a refusal")

	rec, err := m.Record(volID)
	require.NoError(t, err)
	rec.Phase = PhaseAttaching
	require.NoError(t, m.store().save(rec))
	_, err = m.Reconnect(ctx, volID)
	require.ErrorIs(t, err, ErrHalfDone)
	_, err = m.Reconnect(ctx, "not-a-uuid")
	require.ErrorContains(t, err, "not a UUID")
}

// choosingRegistry records which way Reconnect asked for its connector.
type choosingRegistry struct {
	*connector.Registry
	asked []bool
}

func (c *choosingRegistry) ForMultipath(t string, multipath bool) (connector.Connector, error) {
	c.asked = append(c.asked, multipath)
	return c.For(t)
}

// TestReconnectAsAttached: a volume attached with multipath is reconnected
// with multipath, one attached without it without, whatever the registry
// of the reconnecting command was built with.
func TestReconnectAsAttached(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Record)
		want bool
	}{
		{"single path", func(*Record) {}, false},
		{"connector asked for multipath", func(r *Record) { r.Connector["multipath"] = true }, true},
		{"map recorded", func(r *Record) { r.Device.MultipathID = "360000000000000000e00000000010001" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			m := f.manager()
			ctx := context.Background()
			_, err := m.Attach(ctx, AttachOptions{Volume: "data", Persist: true})
			require.NoError(t, err)
			rec, err := m.Record(volID)
			require.NoError(t, err)
			tc.edit(rec)
			require.NoError(t, m.store().save(rec))
			require.NoError(t, m.Suspend(ctx, volID, SuspendOptions{}))
			reg := &choosingRegistry{Registry: m.Connectors.(*connector.Registry)}
			m.Connectors = reg
			_, err = m.Reconnect(ctx, volID)
			require.NoError(t, err)
			require.Equal(t, []bool{tc.want}, reg.asked)
		})
	}
}
