package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFSEvalSymlinksStaysUnderRoot(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, p), 0o755))
	}
	mk("/sys/devices/platform/host0/session1/target0:0:0/0:0:0:1/block/sdb")
	mk("/sys/block")
	mk("/dev/disk/by-path")
	require.NoError(t, os.WriteFile(filepath.Join(root, "/dev/sdb"), nil, 0o644))
	require.NoError(t, os.Symlink("../devices/platform/host0/session1/target0:0:0/0:0:0:1/block/sdb", filepath.Join(root, "/sys/block/sdb")))
	require.NoError(t, os.Symlink("../../sdb", filepath.Join(root, "/dev/disk/by-path/ip-1.2.3.4:3260-iscsi-iqn.x-lun-1")))
	// An absolute link must resolve inside the root, not on the real host.
	require.NoError(t, os.Symlink("/dev/sdb", filepath.Join(root, "/dev/abs")))

	fsys := NewFS(root)
	got, err := fsys.EvalSymlinks("/sys/block/sdb")
	require.NoError(t, err)
	require.Equal(t, "/sys/devices/platform/host0/session1/target0:0:0/0:0:0:1/block/sdb", got)

	got, err = fsys.EvalSymlinks("/dev/disk/by-path/ip-1.2.3.4:3260-iscsi-iqn.x-lun-1")
	require.NoError(t, err)
	require.Equal(t, "/dev/sdb", got)

	got, err = fsys.EvalSymlinks("/dev/abs")
	require.NoError(t, err)
	require.Equal(t, "/dev/sdb", got)

	require.NoError(t, os.Symlink("loop", filepath.Join(root, "/dev/loop")))
	_, err = fsys.EvalSymlinks("/dev/loop")
	require.Error(t, err)

	matches, err := fsys.Glob("/sys/block/sd*")
	require.NoError(t, err)
	require.Equal(t, []string{"/sys/block/sdb"}, matches)
	require.Equal(t, filepath.Join(root, "sys/block"), fsys.Path("/sys/block"))
	require.Equal(t, "/sys/block", fsys.HostPath(fsys.Path("/sys/block")))
}

func TestFSWriteFileNeverCreates(t *testing.T) {
	root := t.TempDir()
	fsys := NewFS(root)
	require.Error(t, fsys.WriteFile("/sys/class/scsi_host/host0/scan", []byte("0 0 1")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/class/scsi_host/host0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sys/class/scsi_host/host0/scan"), nil, 0o200|0o400))
	require.NoError(t, fsys.WriteFile("/sys/class/scsi_host/host0/scan", []byte("0 0 1")))
	s, err := fsys.ReadString("/sys/class/scsi_host/host0/scan")
	require.NoError(t, err)
	require.Equal(t, "0 0 1", s)
}

func TestNewFSRealRoot(t *testing.T) {
	for _, r := range []string{"", "/", "."} {
		require.Equal(t, "/", NewFS(r).Root())
		require.Equal(t, "/etc/hosts", NewFS(r).Path("/etc/hosts"))
	}
}
