package attach

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
)

// mountCall is the fixture's one mount command, or "".
func (f *fixture) mountCall() string {
	for _, c := range f.runner.Calls() {
		if strings.HasPrefix(c, "mount ") {
			return c
		}
	}
	return ""
}

// TestMountHardened: brick mounts volume content nosuid,nodev with the
// type named (from an allow-list unless the user names it), never letting
// the kernel guess the type from data the volume's writer made; relaxing
// either takes an explicit option. The same path mounts NFS volumes
// attached --as-block (a loop device).
func TestMountHardened(t *testing.T) {
	for _, tc := range []struct {
		name   string
		blank  bool
		fsType string
		opts   AttachOptions
		want   string // the mount command, or the error
	}{
		{name: "mkfs then mount", blank: true, opts: AttachOptions{Mkfs: "ext4"},
			want: "mount -t ext4 -o nosuid,nodev -- /dev/sdx /mnt/data"},
		{name: "found xfs", fsType: "xfs",
			want: "mount -t xfs -o nosuid,nodev -- /dev/sdx /mnt/data"},
		{name: "read-only", opts: AttachOptions{Mode: "ro"},
			want: "mount -t ext4 -o nosuid,nodev,ro -- /dev/sdx /mnt/data"},
		{name: "type outside the list refused", fsType: "ntfs",
			want: `error: local-attach data: mount: mount /dev/sdx on /mnt/data: /dev/sdx holds a "ntfs" filesystem, not one brick mounts unasked (btrfs, ext2, ext3, ext4, vfat, xfs): to mount it anyway pass --mount-fstype ntfs`},
		{name: "type named by the user", fsType: "ntfs", opts: AttachOptions{MountFSType: "ntfs"},
			want: "mount -t ntfs -o nosuid,nodev -- /dev/sdx /mnt/data"},
		{name: "no filesystem", blank: true,
			want: "error: local-attach data: mount: mount /dev/sdx on /mnt/data: no filesystem on /dev/sdx (blkid finds no signature): format it with --mkfs TYPE, or name its type with --mount-fstype"},
		{name: "suid and devices asked for", opts: AttachOptions{MountSuidDev: true},
			want: "mount -t ext4 -- /dev/sdx /mnt/data"},
		{name: "bad type name", opts: AttachOptions{MountFSType: "-o"},
			want: `error: local-attach data: --mount-fstype "-o": not a filesystem type name (e.g. ext4, xfs)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			f.blank, f.fsType = tc.blank, tc.fsType
			m := f.manager()
			o := tc.opts
			o.Volume, o.Mountpoint = "data", "/mnt/data"
			_, err := m.Attach(context.Background(), o)
			if msg, ok := strings.CutPrefix(tc.want, "error: "); ok {
				require.EqualError(t, err, msg)
				require.Empty(t, f.mountCall(), "nothing mounted")
				f.requireClean()
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, f.mountCall())
			require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: "data"}))
			f.requireClean()
		})
	}
}

// TestMountNFSAsBlock: an NFS volume file attached --as-block is a loop
// device, mounted like any other block device.
func TestMountNFSAsBlock(t *testing.T) {
	f := newFixture(t, "")
	f.blank = true
	f.conn.device = &connector.Device{Path: "/dev/loop3", Type: connector.TypeBlock, Protocol: "nfs"}
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "dev", "loop3"), make([]byte, 3<<20), 0o600))
	m := f.manager()
	_, err := m.Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: "/mnt/data", Mkfs: "xfs"})
	require.NoError(t, err)
	require.Equal(t, "mount -t xfs -o nosuid,nodev -- /dev/loop3 /mnt/data", f.mountCall())
	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: "data"}))
	f.requireClean()
}

// TestMountpointSymlinkRefused: root must not mount where a link someone
// else can replace points.
func TestMountpointSymlinkRefused(t *testing.T) {
	f := newFixture(t, "")
	f.blank = false
	require.NoError(t, os.MkdirAll(filepath.Join(f.root, "mnt"), 0o755))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(f.root, "mnt", "data")))
	_, err := f.manager().Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: "/mnt/data"})
	require.EqualError(t, err, "local-attach data: mount: mountpoint /mnt/data: untrusted path: /mnt/data is a symlink: give the real path")
	require.Empty(t, f.mountCall())
	f.requireClean()
}

// TestMkfsOnlyOnBlank: blkid finding no signature is not proof of blank
// (plain dm-crypt, raw data): mkfs also needs the first and last MiB all
// zeros, else the attach is refused naming what was found, unless forced.
func TestMkfsOnlyOnBlank(t *testing.T) {
	for _, tc := range []struct {
		name  string
		at    int64 // offset of a non-zero byte; -1 none
		force bool
		want  string // "" = formatted
	}{
		{"blank", -1, false, ""},
		{"data at the start", 4096, false, "local-attach data: mkfs: not formatting /dev/sdx: blkid finds no filesystem, but the device is not blank (a non-zero byte at offset 4096, in its first MiB): it may hold plain dm-crypt or raw data; pass --mkfs-force to format it anyway"},
		{"data at the end", 4<<20 - 1, false, "in its last MiB"},
		{"forced", 0, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			if tc.at >= 0 {
				dev, err := os.OpenFile(filepath.Join(f.root, "dev", "sdx"), os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = dev.WriteAt([]byte{0x5a}, tc.at)
				require.NoError(t, err)
				require.NoError(t, dev.Close())
			}
			m := f.manager()
			rec, err := m.Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: "/mnt/data", Mkfs: "ext4", MkfsForce: tc.force})
			if tc.want != "" {
				require.ErrorContains(t, err, tc.want)
				for _, c := range f.runner.Calls() {
					require.NotContains(t, c, "mkfs")
				}
				f.requireClean()
				return
			}
			require.NoError(t, err)
			require.Equal(t, "ext4", rec.Formatted)
			require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: "data"}))
			f.requireClean()
		})
	}
}

// TestMountpointParentsTrusted: mount(8) follows links in every component,
// so a mountpoint under a symlinked parent, or a parent another user owns
// or may write, is refused before anything is mounted (a user's
// "vols -> ../../var" would have root mount over /var/www); at attach and
// again at restore.
func TestMountpointParentsTrusted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, root string)
		want  string // "" = mounted
	}{
		{"symlinked parent", func(t *testing.T, root string) {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "var", "www"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(root, "home", "alice"), 0o755))
			require.NoError(t, os.Symlink("../../var", filepath.Join(root, "home", "alice", "vols")))
		}, "untrusted path: /home/alice/vols is a symlink: give the real path"},
		{"parent writable by others", func(t *testing.T, root string) {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "home", "alice", "vols"), 0o755))
			require.NoError(t, os.Chmod(filepath.Join(root, "home", "alice"), 0o777))
		}, "untrusted path: /home/alice has mode 0777, writable by others"},
		{"parent of another user", func(t *testing.T, root string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the directory away")
			}
			require.NoError(t, os.MkdirAll(filepath.Join(root, "home", "alice", "vols"), 0o755))
			require.NoError(t, os.Chown(filepath.Join(root, "home", "alice"), 1000, 1000))
		}, "untrusted path: /home/alice is owned by uid 1000"},
		{"sticky parent, root's directory", func(t *testing.T, root string) {
			require.NoError(t, os.MkdirAll(filepath.Join(root, "home", "alice", "vols"), 0o755))
			require.NoError(t, os.Chmod(filepath.Join(root, "home"), os.ModeSticky|0o777))
		}, ""},
		{"missing directories", func(*testing.T, string) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			f.blank = false
			tc.plant(t, f.root)
			m := f.manager()
			_, err := m.Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: "/home/alice/vols/www", Persist: true})
			if tc.want != "" {
				require.ErrorContains(t, err, "local-attach data: mount: mountpoint /home/alice/vols/www: "+tc.want)
				require.Empty(t, f.mountCall())
				f.requireClean()
				return
			}
			require.NoError(t, err)
			require.Equal(t, "/dev/sdx", f.mounts["/home/alice/vols/www"])
		})
	}

	t.Run("restore", func(t *testing.T) {
		f := newFixture(t, "")
		f.blank = false
		m := f.manager()
		ctx := context.Background()
		_, err := m.Attach(ctx, AttachOptions{Volume: "data", Mountpoint: "/home/alice/vols/www", Persist: true})
		require.NoError(t, err)
		require.NoError(t, m.Suspend(ctx, volID, SuspendOptions{Unmount: true}))
		vols := filepath.Join(f.root, "home", "alice", "vols")
		require.NoError(t, os.RemoveAll(vols))
		require.NoError(t, os.MkdirAll(filepath.Join(f.root, "var", "www"), 0o755))
		require.NoError(t, os.Symlink("../../var", vols))
		_, err = m.Reconnect(ctx, volID)
		require.ErrorContains(t, err, "mountpoint /home/alice/vols/www: untrusted path: /home/alice/vols is a symlink")
		require.Empty(t, f.mounts, "nothing mounted over /var/www")
	})
}
