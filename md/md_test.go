package md_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/md"
)

func TestParseExport(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want md.Superblock
	}{
		{"MD_LEVEL=raid1\nMD_DEVICES=2\nMD_NAME=any:volume-1\nMD_UUID=3b8c2f5e:1b2a4c6d:9e8f7a6b:5c4d3e2f\nMD_EVENTS=18\n",
			md.Superblock{UUID: "3b8c2f5e:1b2a4c6d:9e8f7a6b:5c4d3e2f", Name: "volume-1", Level: "raid1", Events: 18}},
		{"MD_NAME=vol\r\nMD_UUID=u\n", md.Superblock{UUID: "u", Name: "vol"}},
		{"garbage\n=\nMD_EVENTS=x", md.Superblock{}},
	} {
		require.Equal(t, tc.want, md.ParseExport(tc.in))
	}
}

func FuzzParseExport(f *testing.F) {
	f.Add("MD_LEVEL=raid1\nMD_NAME=any:v\nMD_UUID=a:b:c:d\nMD_EVENTS=3\n")
	f.Fuzz(func(t *testing.T, s string) {
		sb := md.ParseExport(s)
		if sb.UUID != "" && !strings.Contains(s, "MD_UUID="+sb.UUID) {
			t.Fatalf("UUID %q not from the input", sb.UUID)
		}
	})
}

func TestCommandsAndSysfs(t *testing.T) {
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		op := hosttest.Arg(t, cmd, 0)
		if op == "--examine" && hosttest.Arg(t, cmd, 2) == "/dev/nvme2n1" {
			return host.Result{}, hosttest.Fail(cmd, 1, "mdadm: No md superblock detected on /dev/nvme2n1.")
		}
		if op == "--examine" && hosttest.Arg(t, cmd, 2) == "/dev/nvme3n1" {
			return host.Result{}, hosttest.Fail(cmd, 2, "mdadm: cannot open /dev/nvme3n1: Input/output error")
		}
		if op == "--manage" && hosttest.Arg(t, cmd, 2) == "--re-add" {
			return host.Result{}, hosttest.Fail(cmd, 1, "mdadm: --re-add for /dev/nvme2n1 to /dev/md/v is not possible")
		}
		return host.Result{Stdout: []byte("MD_UUID=a:b:c:d\nMD_NAME=any:v\n")}, nil
	})
	h, root := hosttest.New(t, r)
	m := md.New(h, md.Options{DeviceTimeout: 1})
	ctx := context.Background()

	require.Error(t, m.Create(ctx, "../x", []string{"/dev/nvme1n1"}, false), "a name that is a path")
	hosttest.Symlink(t, root, "/dev/md/v", "../md127")
	hosttest.WriteFile(t, root, "/dev/md127", "")
	hosttest.WriteFile(t, root, "/sys/block/md127/md/array_state", "clean\n")
	require.NoError(t, m.Create(ctx, "v", []string{"/dev/nvme1n1", "/dev/nvme2n1"}, true))
	require.Equal(t, "mdadm --create /dev/md/v --run --level=1 --metadata=1.2 --raid-devices=2 --bitmap=internal --homehost=any --name=v --failfast --assume-clean --readonly /dev/nvme1n1 /dev/nvme2n1", r.Calls()[0])

	sb, ok, err := m.Examine(ctx, "/dev/nvme1n1")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "v", sb.Name)
	_, ok, err = m.Examine(ctx, "/dev/nvme2n1")
	require.NoError(t, err)
	require.False(t, ok, "no superblock is not an error")
	_, _, err = m.Examine(ctx, "/dev/nvme3n1")
	require.ErrorContains(t, err, "Input/output error")

	require.NoError(t, m.ReAdd(ctx, "v", "/dev/nvme2n1"))
	require.Contains(t, r.Calls(), "mdadm --manage /dev/md/v --add /dev/nvme2n1", "--add when --re-add is refused")

	hosttest.WriteFile(t, root, "/sys/block/md127/md/array_state", "clean\n")
	hosttest.WriteFile(t, root, "/sys/block/md127/md/degraded", "1\n")
	hosttest.Mkdir(t, root, "/sys/block/md127/slaves/nvme1n1")
	hosttest.WriteFile(t, root, "/sys/block/md127/md/dev-nvme1n1/state", "in_sync,failfast\n")
	a, ok, err := m.Find("v", nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, md.Array{Device: "md127", State: "clean", Members: []string{"nvme1n1"}, InSync: []string{"nvme1n1"}, Degraded: 1}, a)

	// Without the /dev/md link, a member's holder finds the array.
	hosttest.Mkdir(t, root, "/sys/block/nvme1n1/holders/md127")
	a, ok, err = m.Find("other", []string{"/dev/nvme1n1"})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "md127", a.Device)
	_, ok, err = m.Find("other", []string{"/dev/nvme9n1"})
	require.NoError(t, err)
	require.False(t, ok)

	require.NoError(t, m.Stop(ctx, "md127"))
	require.Contains(t, r.Calls(), "mdadm --stop /dev/md127")
	require.NoFileExists(t, root+"/dev/md/v", "the link to the stopped array goes with it")

	// A stale link (no udev removed it) is dropped before an assemble.
	hosttest.Symlink(t, root, "/dev/md/w", "../md126")
	hosttest.Symlink(t, root, "/dev/md/w2", "../md126")
	_ = m.Assemble(ctx, "w", []string{"/dev/nvme1n1"}, false)
	require.NoFileExists(t, root+"/dev/md/w")
	_, err = os.Lstat(root + "/dev/md/w2")
	require.NoError(t, err, "only the array's own link")
	require.NoError(t, m.Stop(ctx, "md9"), "already gone")
}
