package nfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

func TestExtendLoop(t *testing.T) {
	c, k, _ := newFake(t)
	c.opts.AsBlock = true
	ctx := context.Background()
	info := nfsInfo(t, volA)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	hosttest.WriteFile(t, k.root, "/sys/block/loop0/size", "2097152\n")
	// losetup --set-capacity reads the file's new size, as the kernel does.
	r := hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		if len(cmd.Args) == 2 && hosttest.Arg(t, cmd, 0) == "--set-capacity" {
			hosttest.WriteFile(t, k.root, "/sys/block/loop0/size", "4194304\n")
			return host.Result{}, nil
		}
		return k.run(ctx, cmd)
	})
	c2 := New(hosttest.NewAt(t, k.root, r), c.opts)
	sz, err := c2.Extend(ctx, info, dev, 2<<30)
	require.NoError(t, err)
	require.Equal(t, &connector.Resize{Device: "/dev/loop0", OldSize: 1 << 30, NewSize: 2 << 30}, sz)
	require.Equal(t, []string{"losetup --set-capacity /dev/loop0"}, r.Calls())

	_, err = c2.Extend(ctx, info, dev, 3<<30)
	require.ErrorContains(t, err, "may still cache the file's old size")
	// --local-only: the file's size on the server is the size to reach.
	require.NoError(t, os.Truncate(filepath.Join(k.root, dev.Extra[ExtraFile]), 3<<30))
	_, err = c2.Extend(ctx, info, dev, 0)
	require.ErrorContains(t, err, "the device reads 2147483648 bytes after losetup --set-capacity, the volume 3221225472")

	_, err = c2.Extend(ctx, info, &connector.Device{Path: "/x", Extra: map[string]string{ExtraLoop: "/dev/loop0", ExtraFile: "/other"}}, 0)
	require.ErrorContains(t, err, "no longer backs /other")
	_, err = c2.Extend(ctx, info, &connector.Device{Path: "/x"}, 0)
	require.ErrorIs(t, err, connector.ErrUnsupported)
	_, err = c2.Extend(ctx, info, &connector.Device{Extra: map[string]string{ExtraLoop: "/dev/sda"}}, 0)
	require.ErrorContains(t, err, "not a loop device")
}
