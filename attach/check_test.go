package attach

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
)

// TestCheckOptions: every local mistake is refused before Cinder is asked,
// naming the flag; a trailing slash is cleaned, not refused.
func TestCheckOptions(t *testing.T) {
	h := &host.Host{Runner: &host.ExecRunner{}}
	tests := []struct {
		name string
		opts AttachOptions
		want string // error substring; "" is success
	}{
		{"mkfs without mountpoint", AttachOptions{Mkfs: "ext4"}, "--mkfs needs --mountpoint"},
		{"relative mountpoint", AttachOptions{Mountpoint: "srv/data"}, "must be an absolute path"},
		{"proc mountpoint", AttachOptions{Mountpoint: "/proc/x"}, `--mountpoint "/proc/x": under /proc`},
		{"sys mountpoint", AttachOptions{Mountpoint: "/sys"}, "under /sys"},
		{"mkfs ntfs missing", AttachOptions{Mountpoint: "/srv/d", Mkfs: "brickfs"}, "--mkfs brickfs: mkfs.brickfs not found"},
		{"mkfs-force alone: an encrypted volume's LUKS header", AttachOptions{MkfsForce: true}, ""},
		{"boot-index alone", AttachOptions{BootIndex: 1}, "--boot-index goes with --ironic-node"},
		{"negative boot-index", AttachOptions{IronicNode: "n", BootIndex: -1}, "--boot-index -1: must be 0 or more"},
		{"bad mode", AttachOptions{Mode: "rx"}, "--mode"},
		{"trailing slash", AttachOptions{Mountpoint: "/srv/data/"}, ""},
		{"plain", AttachOptions{Mountpoint: "/srv/data", Mode: "ro"}, ""},
	}
	for _, tt := range tests {
		opts := tt.opts
		err := CheckOptions(h, &opts)
		if tt.want == "" {
			require.NoError(t, err, tt.name)
			continue
		}
		require.ErrorContains(t, err, tt.want, tt.name)
	}
	opts := AttachOptions{Mountpoint: "/srv/data//"}
	require.NoError(t, CheckOptions(h, &opts))
	require.Equal(t, "/srv/data", opts.Mountpoint)
}
