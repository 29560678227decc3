//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/osauth"
)

// guestCinderOptions is the Cinder the guest attach tests use: portals on
// the guest-side slirp addresses.
var guestCinderOptions = testbed.CinderOptions{
	TargetIP:     testbed.GuestHostIP,
	SecondaryIPs: []string{testbed.GuestHostIP2},
}

// contractConnector is a plausible host connector; wwnns is a list (as
// Cinder drivers expect, unlike gophercloud's string).
var contractConnector = cinderapi.HostConnector{
	"platform": "x86_64", "os_type": "linux", "ip": "10.0.2.15", "host": "brick-contract",
	"multipath": false, "enforce_multipath": false,
	"initiator": "iqn.1993-08.org.debian:01:brickcontract",
	"wwnns":     []any{"2000000000000001"}, "wwpns": []any{"1000000000000001"},
	"do_local_attach": false,
}

// cinderClient returns brick's Cinder client for the test bed, through
// osauth (noauth, endpoint + project) like the CLI builds it.
func cinderClient(t *testing.T, c *testbed.Cinder, forced string) *cinderapi.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	red := host.NewRedactor()
	sc, err := osauth.BlockStorageClient(ctx, osauth.Options{AuthType: "noauth", CinderEndpoint: c.Endpoint, ProjectID: c.ProjectID, Redactor: red})
	require.NoError(t, err)
	cl, err := cinderapi.NewClient(ctx, sc, forced)
	require.NoError(t, err)
	return cl
}

func newVolume(t *testing.T, c *testbed.Cinder, name string) *testbed.Volume {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v, err := c.CreateVolume(ctx, name, 1)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// Whatever a failed test left: back to available, then delete.
		_ = c.Request(ctx, "POST", "/volumes/"+v.ID+"/action", "", map[string]any{"os-reset_status": map[string]any{"status": "available", "attach_status": "detached"}}, nil)
		if err := c.DeleteVolume(ctx, v.ID); err != nil {
			t.Logf("cleanup: delete volume %s: %v", v.ID, err)
		}
	})
	return v
}

// timed logs how long one call took: the figures the report quotes.
func timed(t *testing.T, what string, f func() error) {
	t.Helper()
	start := time.Now()
	err := f()
	require.NoError(t, err, what)
	t.Logf("%-40s %s", what, time.Since(start).Round(time.Millisecond))
}

func requireStatus(t *testing.T, cl *cinderapi.Client, id, want string) *cinderapi.Volume {
	t.Helper()
	v, err := cl.Volume(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, want, v.Status, "volume %s", id)
	return v
}

// TestCinderAPIContract runs every call cinderapi makes against the real
// Cinder and checks the state transitions brick relies on.
func TestCinderAPIContract(t *testing.T) {
	lane(t, laneServices)
	// Any settings do for the contract (nothing logs in); use the guest
	// tests' settings so a run of all brick Cinder tests restarts nothing.
	c := needCinder(t, guestCinderOptions)
	ctx := context.Background()

	t.Run("negotiation", func(t *testing.T) {
		cl := cinderClient(t, c, "")
		require.Equal(t, "3.54", cl.Version.String())
		require.Equal(t, c.MaxMicroversion, cl.Max.String())
		require.Equal(t, "3.0", cl.Min.String())
		require.Equal(t, cinderapi.FlowV3, cl.Flow().Name())
		require.Equal(t, cinderapi.FlowLegacy, cinderClient(t, c, "3.0").Flow().Name())
		require.Equal(t, cinderapi.FlowV3, cinderClient(t, c, "3.44").Flow().Name())

		sc, err := osauth.BlockStorageClient(ctx, osauth.Options{CinderEndpoint: c.Endpoint})
		require.NoError(t, err)
		_, err = cinderapi.NewClient(ctx, sc, "3.99")
		require.ErrorIs(t, err, apierr.ErrUnsupported)
		require.EqualError(t, err, "cinder microversion: this Cinder supports 3.0 to "+c.MaxMicroversion+", not 3.99")
		// The server agrees: 3.99 is a 406 from Cinder itself.
		raw := *sc
		raw.Microversion = "3.99"
		_, err = volumes.Get(ctx, &raw, "00000000-0000-0000-0000-000000000000").Extract()
		require.Error(t, err)
		require.Contains(t, err.Error(), "406")
	})

	t.Run("lookup and errors", func(t *testing.T) {
		cl := cinderClient(t, c, "")
		name := "brick-contract-lookup-" + time.Now().Format("150405.000")
		v := newVolume(t, c, name)
		got, err := cl.FindVolume(ctx, name)
		require.NoError(t, err)
		require.Equal(t, v.ID, got.ID)
		got, err = cl.FindVolume(ctx, v.ID)
		require.NoError(t, err)
		require.Equal(t, name, got.Name)

		_, err = cl.FindVolume(ctx, "brick-contract-no-such-volume")
		require.ErrorIs(t, err, apierr.ErrNotFound)
		_, err = cl.Volume(ctx, "00000000-0000-4000-8000-000000000000")
		require.ErrorIs(t, err, apierr.ErrNotFound)
		require.EqualError(t, err, "cinder get volume 00000000-0000-4000-8000-000000000000: Volume 00000000-0000-4000-8000-000000000000 could not be found (HTTP 404)")

		dup := name + "-dup"
		a, b := newVolume(t, c, dup), newVolume(t, c, dup)
		_, err = cl.FindVolume(ctx, dup)
		require.ErrorIs(t, err, apierr.ErrAmbiguous)
		require.Contains(t, err.Error(), a.ID)
		require.Contains(t, err.Error(), b.ID)
	})

	t.Run("v3 flow", func(t *testing.T) {
		cl := cinderClient(t, c, "")
		f := cl.Flow()
		v := newVolume(t, c, "brick-contract-v3")
		var att string
		timed(t, "v3 attachment create (reserve)", func() (err error) { att, err = f.Reserve(ctx, v.ID, "rw"); return })
		requireStatus(t, cl, v.ID, "reserved")
		conn := cinderapi.HostConnector{}
		for k, val := range contractConnector {
			conn[k] = val
		}
		conn["multipath"] = true
		conn["mountpoint"] = "/mnt/contract"
		var info any
		timed(t, "v3 attachment update (export)", func() error {
			ci, err := f.Export(ctx, v.ID, att, conn)
			info = ci
			if err == nil {
				require.Equal(t, "iscsi", ci.DriverVolumeType)
				if len(c.SecondaryIPs) > 0 {
					portals, _, perr := ci.Strings("target_portals")
					require.NoError(t, perr)
					require.Len(t, portals, 1+len(c.SecondaryIPs))
				}
				require.Equal(t, c.TargetIQN(v.ID), ci.Data["target_iqn"])
				require.Equal(t, att, ci.Data["attachment_id"])
				if c.CHAP {
					require.Len(t, ci.Secrets(), 1)
				}
			}
			return err
		})
		require.NotNil(t, info)
		requireStatus(t, cl, v.ID, "attaching")
		atts, err := cl.Attachments(ctx, v.ID)
		require.NoError(t, err)
		require.Len(t, atts, 1)
		require.True(t, atts[0].HasConnection())
		timed(t, "v3 attachment complete", func() error {
			_, err := f.Complete(ctx, v.ID, att, cinderapi.CompleteOpts{HostName: "brick-contract"})
			return err
		})
		vol := requireStatus(t, cl, v.ID, "in-use")
		require.Len(t, vol.Attachments, 1)
		require.Equal(t, "brick-contract", vol.Attachments[0].HostName)
		require.Equal(t, att, vol.Attachments[0].AttachmentID)
		require.Equal(t, "/mnt/contract", vol.Attachments[0].Device)
		timed(t, "v3 attachment show (connection info)", func() error {
			ci, err := f.ConnectionInfo(ctx, v.ID, att, nil)
			if err == nil {
				require.Equal(t, c.TargetIQN(v.ID), ci.Data["target_iqn"])
			}
			return err
		})
		// A second attach of an in-use volume is refused (not multiattach).
		_, err = f.Reserve(ctx, v.ID, "rw")
		require.ErrorIs(t, err, apierr.ErrInvalidState)
		require.NotContains(t, err.Error(), "\n")
		t.Logf("in-use reserve error: %v", err)
		rel := cinderapi.ReleaseOpts{AttachmentID: att, HostName: "brick-contract"}
		timed(t, "v3 attachment delete", func() error { return f.Release(ctx, v.ID, rel) })
		requireStatus(t, cl, v.ID, "available")
		require.NoError(t, f.Release(ctx, v.ID, rel), "deleting a deleted attachment is success")
	})

	t.Run("v3 3.44 sends no mode", func(t *testing.T) {
		cl := cinderClient(t, c, "3.44")
		f := cl.Flow()
		v := newVolume(t, c, "brick-contract-v3-344")
		att, err := f.Reserve(ctx, v.ID, "rw")
		require.NoError(t, err, "mode must not be sent below 3.54")
		require.NoError(t, f.Release(ctx, v.ID, cinderapi.ReleaseOpts{AttachmentID: att}))
		requireStatus(t, cl, v.ID, "available")
	})

	t.Run("legacy flow", func(t *testing.T) {
		cl := cinderClient(t, c, "3.0")
		f := cl.Flow()
		v := newVolume(t, c, "brick-contract-legacy")
		timed(t, "legacy os-reserve", func() error { _, err := f.Reserve(ctx, v.ID, ""); return err })
		requireStatus(t, cl, v.ID, "attaching")
		timed(t, "legacy os-initialize_connection", func() error {
			ci, err := f.Export(ctx, v.ID, "", contractConnector)
			if err == nil {
				require.Equal(t, "iscsi", ci.DriverVolumeType)
				require.Equal(t, c.TargetIP+":3260", ci.Data["target_portal"])
				lun, _, lerr := ci.Int("target_lun")
				require.NoError(t, lerr)
				require.EqualValues(t, 1, lun)
			}
			return err
		})
		var att string
		timed(t, "legacy os-attach", func() (err error) {
			att, err = f.Complete(ctx, v.ID, "", cinderapi.CompleteOpts{HostName: "brick-contract", Mountpoint: "/mnt/legacy", Mode: "rw"})
			return
		})
		require.NotEmpty(t, att)
		vol := requireStatus(t, cl, v.ID, "in-use")
		require.Len(t, vol.Attachments, 1)
		require.Equal(t, "brick-contract", vol.Attachments[0].HostName)
		var roll func(context.Context) error
		timed(t, "legacy os-begin_detaching", func() (err error) { roll, err = f.BeginDetach(ctx, v.ID); return })
		requireStatus(t, cl, v.ID, "detaching")
		timed(t, "legacy os-roll_detaching", func() error { return roll(ctx) })
		requireStatus(t, cl, v.ID, "in-use")
		_, err := f.BeginDetach(ctx, v.ID)
		require.NoError(t, err)
		rel := cinderapi.ReleaseOpts{AttachmentID: att, Connector: contractConnector, HostName: "brick-contract"}
		timed(t, "legacy terminate_connection + os-detach", func() error { return f.Release(ctx, v.ID, rel) })
		requireStatus(t, cl, v.ID, "available")
		require.NoError(t, f.Release(ctx, v.ID, rel), "detaching twice is success")
	})

	t.Run("legacy undo after os-attach", func(t *testing.T) {
		cl := cinderClient(t, c, "3.0")
		f := cl.Flow()
		v := newVolume(t, c, "brick-contract-legacy-undo")
		_, err := f.Reserve(ctx, v.ID, "")
		require.NoError(t, err)
		_, err = f.Export(ctx, v.ID, "", contractConnector)
		require.NoError(t, err)
		cop := cinderapi.CompleteOpts{HostName: "brick-contract"}
		_, err = f.Complete(ctx, v.ID, "", cop)
		require.NoError(t, err)
		// Rollback as attach does, the attachment ID unknown (brick died
		// inside os-attach): the host's attachment is found.
		rel := cinderapi.ReleaseOpts{Connector: contractConnector, HostName: "brick-contract"}
		require.NoError(t, f.Release(ctx, v.ID, rel))
		vol := requireStatus(t, cl, v.ID, "available")
		require.Empty(t, vol.Attachments)

		// Reserve + export, then undo: nothing attached, unreserved.
		_, err = f.Reserve(ctx, v.ID, "")
		require.NoError(t, err)
		_, err = f.Export(ctx, v.ID, "", contractConnector)
		require.NoError(t, err)
		require.NoError(t, f.Release(ctx, v.ID, rel))
		requireStatus(t, cl, v.ID, "available")
		_, err = f.Reserve(ctx, v.ID, "")
		require.NoError(t, err, "reservable again")
		// Reserve only: no export to terminate.
		require.NoError(t, f.Release(ctx, v.ID, cinderapi.ReleaseOpts{HostName: "brick-contract"}))
		requireStatus(t, cl, v.ID, "available")
	})

	t.Run("admin actions", func(t *testing.T) {
		cl := cinderClient(t, c, "")
		f := cl.Flow()
		v := newVolume(t, c, "brick-contract-admin")
		att, err := f.Reserve(ctx, v.ID, "rw")
		require.NoError(t, err)
		_, err = f.Export(ctx, v.ID, att, contractConnector)
		require.NoError(t, err)
		_, err = f.Complete(ctx, v.ID, att, cinderapi.CompleteOpts{})
		require.NoError(t, err)
		_, err = cl.Volume(ctx, "00000000-0000-4000-8000-000000000000")
		require.True(t, gophercloud.ResponseCodeIs(err, 404), "the typed error keeps gophercloud's cause")
		timed(t, "os-force_detach", func() error { return cl.ForceDetach(ctx, v.ID, att, contractConnector) })
		requireStatus(t, cl, v.ID, "available")

		_, err = cinderClient(t, c, "3.0").Flow().Reserve(ctx, v.ID, "")
		require.NoError(t, err)
		requireStatus(t, cl, v.ID, "attaching")
		timed(t, "os-reset_status", func() error { return cl.ResetStatus(ctx, v.ID) })
		requireStatus(t, cl, v.ID, "available")
	})

	t.Run("no initiator", func(t *testing.T) {
		cl := cinderClient(t, c, "")
		f := cl.Flow()
		v := newVolume(t, c, "brick-contract-noinit")
		att, err := f.Reserve(ctx, v.ID, "rw")
		require.NoError(t, err)
		_, err = f.Export(ctx, v.ID, att, cinderapi.HostConnector{"host": "x", "platform": "x86_64"})
		require.Error(t, err)
		t.Logf("export without initiator: %v", err)
		require.NotContains(t, err.Error(), "Traceback")
		require.True(t, gophercloud.ResponseCodeIs(err, 500), "the typed error keeps gophercloud's cause")
		require.NoError(t, f.Release(ctx, v.ID, cinderapi.ReleaseOpts{AttachmentID: att}))
		requireStatus(t, cl, v.ID, "available")
	})

	t.Run("unreachable", func(t *testing.T) {
		sc, err := osauth.BlockStorageClient(ctx, osauth.Options{CinderEndpoint: "http://127.0.0.1:1/v3"})
		require.NoError(t, err)
		_, err = cinderapi.NewClient(ctx, sc, "")
		require.ErrorIs(t, err, apierr.ErrUnreachable)
		require.Contains(t, err.Error(), "cannot reach http://127.0.0.1:1/: connection refused; check --cinder-endpoint")
	})
}
