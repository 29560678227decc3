package nfs

import (
	"context"
	"fmt"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// Extend makes an --as-block loop device read its file's new size
// (losetup --set-capacity) and checks it reads at least the file's size as
// the server reports it (and newSize, when known); a plain file volume
// needs nothing. The loop device must still back the volume's file.
func (c *Connector) Extend(ctx context.Context, _ connector.ConnectionInfo, dev *connector.Device, newSize int64) (*connector.Resize, error) {
	if dev == nil || dev.Extra[ExtraLoop] == "" {
		return nil, fmt.Errorf("nfs extend: %w: a file volume needs no extend on the host", connector.ErrUnsupported)
	}
	loop, file := dev.Extra[ExtraLoop], dev.Extra[ExtraFile]
	if !loopDevRE().MatchString(loop) {
		return nil, fmt.Errorf("nfs extend: %s is not a loop device", connector.Quote(loop))
	}
	if b := c.loop.backing(loop); !c.loop.isBacking(b, file) {
		return nil, fmt.Errorf("nfs extend: %s no longer backs %s (it backs %s)", loop, file, connector.Quote(b))
	}
	old, err := c.loop.size(loop)
	if err != nil {
		return nil, err
	}
	// The open revalidates the NFS client's view of the file, which
	// losetup's capacity check reads.
	fileSize, err := c.h.FS.OpenSize(file)
	if err != nil {
		return nil, fmt.Errorf("nfs extend: size of %s: %w", file, err)
	}
	if _, err := c.h.Runner.Run(ctx, host.Command{Name: "losetup", Args: []string{"--set-capacity", loop}, Timeout: c.opts.CommandTimeout}); err != nil {
		return nil, fmt.Errorf("nfs extend %s: %w", loop, err)
	}
	cur, err := c.loop.size(loop)
	if err != nil {
		return nil, err
	}
	if want := max(newSize, fileSize); cur < want {
		return nil, fmt.Errorf("nfs extend %s: the device reads %d bytes after losetup --set-capacity, the volume %d (the NFS client may still cache the file's old size)", loop, cur, want)
	}
	return &connector.Resize{Device: loop, OldSize: old, NewSize: cur}, nil
}
