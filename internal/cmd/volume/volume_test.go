package volume

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/cmd/factory/factorytest"
)

// newFactory is a Factory over a host with one interface, eth0 (10.0.2.15).
func newFactory(t *testing.T) *factory.Factory {
	root := t.TempDir()
	hosttest.WriteFile(t, root, "/proc/1/net/route", "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n"+
		"eth0\t00000000\t0202000A\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"+
		"eth0\t0002000A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
	hosttest.WriteFile(t, root, "/proc/1/net/fib_trie", "Local:\n  |-- 10.0.2.15\n     /32 host LOCAL\n")
	return factorytest.New(root)
}

func TestNewCmdLocalAttach(t *testing.T) {
	f := newFactory(t)
	o, err := factorytest.Parse(t, f, NewCmdLocalAttach, "data", "--mountpoint", "/srv/data/", "--mkfs", "ext4", "--multipath", "--nic", "eth0", "--persist")
	if err != nil {
		require.ErrorContains(t, err, "mkfs.ext4 not found", "only where mkfs.ext4 is missing")
	} else {
		require.Equal(t, "data", o.Attach.Volume)
		require.Equal(t, "/srv/data", o.Attach.Mountpoint, "trailing slash cleaned")
		require.True(t, o.Attach.Persist)
		require.True(t, o.Attacher.Volume.Opts.Multipath)
		require.Equal(t, "eth0", o.Attacher.Volume.NIC)
	}
	for args, want := range map[string]string{
		"data --mkfs ext4":                       "--mkfs needs --mountpoint",
		"data --mountpoint srv":                  `--mountpoint "srv": must be an absolute path`,
		"data --mountpoint /proc/x":              "under /proc",
		"data --nic nosuch0":                     `--nic "nosuch0": get connector: interface nosuch0 has no usable IP address`,
		"data --boot-index 1":                    "--boot-index goes with --ironic-node",
		"data --mountpoint /m --mkfs ntfsnosuch": "--mkfs ntfsnosuch: mkfs.ntfsnosuch not found",
	} {
		_, err := factorytest.Parse(t, f, NewCmdLocalAttach, strings.Fields(args)...)
		require.ErrorContains(t, err, want, args)
		var ue factory.UsageError
		require.ErrorAs(t, err, &ue, args)
	}
}

func TestNewCmdLocalDetach(t *testing.T) {
	o, err := factorytest.Parse(t, newFactory(t), NewCmdLocalDetach, "data", "--attachment-uuid", "a1", "--force", "--device-info", "{}")
	require.NoError(t, err)
	require.Equal(t, "data", o.Detach.Volume)
	require.Equal(t, "a1", o.Detach.AttachmentID)
	require.True(t, o.Detach.Force)
	require.Equal(t, "{}", o.deviceInfoIgnored)
}

func TestNewCmdExtend(t *testing.T) {
	f := newFactory(t)
	o, err := factorytest.Parse(t, f, NewCmdExtend, "data", "--size", "2", "--cinder-timeout", "1m")
	require.NoError(t, err)
	require.Equal(t, "data", o.Extend.Volume)
	require.Equal(t, 2, o.Extend.SizeGiB)
	require.Equal(t, time.Minute, o.Extend.CinderTimeout)
	for _, args := range [][]string{{"data"}, {"data", "--size", "2", "--local-only"}} {
		_, err := factorytest.Parse(t, f, NewCmdExtend, args...)
		require.ErrorContains(t, err, "give --size GiB", args)
	}
}
