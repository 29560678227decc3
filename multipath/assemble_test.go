package multipath_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
)

func TestAssemble(t *testing.T) {
	var root string
	runner := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		// multipathd builds the map once it is handed the first path.
		if cmd.Name == "multipathd" && cmd.Args[0] == "add" && cmd.Args[2] == "/dev/sdb" {
			fixtureMap(t, root, "0")
		}
		return host.Result{Stdout: []byte("ok\n")}, nil
	})
	h, r := hosttest.New(t, runner)
	root = r
	for _, d := range []string{"sdb", "sdc"} {
		hosttest.Mkdir(t, root, "/sys/devices/x/"+d+"/holders") // /sys/block links come with the map fixture
	}
	m := multipath.New(h, multipath.Options{MapTimeout: 2 * time.Second})
	require.False(t, m.WWIDKnown(wwid))

	mp, err := m.Assemble(context.Background(), wwid, "sdb", "sdc")
	require.NoError(t, err)
	require.Equal(t, "dm-0", mp.Device)
	// sdc joined the map with sdb, so it is not handed over again.
	require.Equal(t, []string{"multipathd add path /dev/sdb"}, runner.Calls())
	require.True(t, m.WWIDKnown(wwid), "the WWID went into the wwids file")

	// Known WWID and a complete map: nothing runs.
	hosttest.WriteFile(t, root, "/etc/multipath/wwids", "# comment\n/"+wwid+"/\n")
	require.True(t, m.WWIDKnown(wwid))
	n := len(runner.Calls())
	_, err = m.Assemble(context.Background(), wwid, "sdb", "sdc")
	require.NoError(t, err)
	require.Len(t, runner.Calls(), n)

	_, err = m.Assemble(context.Background(), "-bad wwid", "sdb")
	require.Error(t, err)
}
