//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestAttachErrorsCLI runs the brick binary on the host against the real
// Cinder for the error cases of issue 5: each must exit non-zero with one
// line naming the volume and the step. No kernel work happens (each fails
// before connecting), so a fixture host tree stands in for the host.
func TestAttachErrorsCLI(t *testing.T) {
	lane(t, laneServices)
	c := needCinder(t, guestCinderOptions)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	root := t.TempDir()
	hosttest.WriteFile(t, root, "/etc/iscsi/initiatorname.iscsi", "InitiatorName=iqn.1993-08.org.debian:01:brickerrors\n")
	hosttest.WriteFile(t, root, "/proc/sys/kernel/hostname", "brick-errors\n")

	// A volume in use by another host (v3: Cinder takes the host name from
	// the connector, "brick-contract").
	busy := newVolume(t, c, "brick-e2e-errors-busy")
	cl := cinderClient(t, c, "")
	f := cl.Flow()
	att, err := f.Reserve(ctx, busy.ID, "rw")
	require.NoError(t, err)
	_, err = f.Export(ctx, busy.ID, att, contractConnector)
	require.NoError(t, err)
	_, err = f.Complete(ctx, busy.ID, att, cinderapi.CompleteOpts{})
	require.NoError(t, err)

	env := []string{"OS_AUTH_TYPE=noauth", "BRICK_CINDER_ENDPOINT=" + c.Endpoint, "BRICK_HOST_ROOT=" + root}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string // prefix of the single stderr line
	}{
		{"unknown volume", nil, []string{"local-attach", "brick-no-such-volume"},
			"brick: local-attach brick-no-such-volume: cinder find volume brick-no-such-volume: no volume with this ID or name"},
		{"unknown volume id", nil, []string{"local-attach", "00000000-0000-4000-8000-000000000042"},
			"brick: local-attach 00000000-0000-4000-8000-000000000042: cinder find volume 00000000-0000-4000-8000-000000000042: no volume with this ID or name"},
		{"in-use elsewhere v3", nil, []string{"local-attach", busy.ID},
			"brick: local-attach " + busy.ID + ": cinder attachment create volume " + busy.ID + ": Invalid volume: "},
		{"in-use elsewhere legacy", nil, []string{"local-attach", busy.ID, "--os-volume-api-version", "3.0"},
			"brick: local-attach " + busy.ID + ": cinder reserve volume " + busy.ID + ": Invalid volume: "},
		// Not attached here: nothing to do, exit 0 (as disconnect of a gone device).
		{"in-use elsewhere detach", nil, []string{"local-detach", busy.ID},
			"brick: note: local-detach " + busy.ID + ": not attached to this host: volume " + busy.ID + " has no attachment for host brick-errors"},
		{"bad microversion", nil, []string{"local-attach", busy.ID, "--os-volume-api-version", "3.99"},
			"brick: local-attach " + busy.ID + ": cinder microversion: this Cinder supports 3.0 to " + c.MaxMicroversion + ", not 3.99"},
		{"malformed microversion", nil, []string{"local-attach", busy.ID, "--os-volume-api-version", "three"},
			"brick: --os-volume-api-version \"three\": want 3.N"},
		{"unreachable endpoint", []string{"BRICK_CINDER_ENDPOINT=http://127.0.0.1:1/v3"}, []string{"local-attach", busy.ID},
			"brick: local-attach " + busy.ID + ": cinder version discovery: cannot reach http://127.0.0.1:1/: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBrickBin(t, ctx, append(append([]string{}, env...), tc.env...), tc.args...)
			switch tc.name {
			case "in-use elsewhere detach":
				require.Equal(t, 0, r.code, r.stderr)
			case "malformed microversion":
				require.Equal(t, 2, r.code, r.stderr)
			default:
				require.Equal(t, 1, r.code, r.stderr)
			}
			require.Empty(t, r.stdout)
			require.True(t, strings.HasPrefix(r.stderr, tc.want), "got %q\nwant prefix %q", r.stderr, tc.want)
			require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			require.NotContains(t, r.stderr, "Traceback")
		})
	}
	v, err := cl.Volume(ctx, busy.ID)
	require.NoError(t, err)
	require.Equal(t, "in-use", v.Status, "the other host's attachment is untouched")
	require.Len(t, v.Attachments, 1)
	require.Equal(t, contractConnector["host"], v.Attachments[0].HostName)
}
