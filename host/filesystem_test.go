package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestFormatAndMount is the recipe local-attach and the CSI node share:
// a blank device is formatted and mounted nosuid,nodev; one holding data
// blkid does not know is refused; a mountpoint under a symlink is refused
// before anything runs.
func TestFormatAndMount(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  bool
		link  bool
		calls []string
		want  string
	}{
		{name: "blank", calls: []string{
			"blkid -p -o export -- /dev/sdx", "mkfs.ext4 /dev/sdx", "mount -t ext4 -o nosuid,nodev -- /dev/sdx /mnt/v"}},
		{name: "data", data: true, calls: []string{"blkid -p -o export -- /dev/sdx"},
			want: "not formatting /dev/sdx: blkid finds no filesystem, but the device is not blank (a non-zero byte at offset 100, in its first MiB)"},
		{name: "symlinked parent", link: true,
			calls: []string{"blkid -p -o export -- /dev/sdx", "mkfs.ext4 /dev/sdx"},
			want:  "mountpoint /mnt/v: untrusted path: /mnt is a symlink"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
				if cmd.Name == "blkid" {
					return host.Result{ExitCode: 2}, nil
				}
				return host.Result{}, nil
			})
			h, root := hosttest.New(t, r)
			hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n")
			dev := filepath.Join(root, "dev", "sdx")
			require.NoError(t, os.MkdirAll(filepath.Dir(dev), 0o755))
			require.NoError(t, os.WriteFile(dev, nil, 0o600))
			require.NoError(t, os.Truncate(dev, 4<<20))
			if tc.data {
				require.NoError(t, os.WriteFile(dev, []byte{100: 1}, 0o600))
				require.NoError(t, os.Truncate(dev, 4<<20))
			}
			if tc.link {
				hosttest.Symlink(t, root, "/mnt", t.TempDir())
			}
			formatted, err := h.FormatAndMount(context.Background(), host.FormatMount{
				Device: "/dev/sdx", Dir: "/mnt/v", Mkfs: "ext4", Options: host.MountOptions(false, false)})
			require.Equal(t, tc.calls, r.Calls())
			if tc.want != "" {
				require.ErrorContains(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			require.True(t, formatted)
		})
	}
}
