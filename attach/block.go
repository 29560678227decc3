package attach

import (
	"context"
	"fmt"

	"github.com/brick-storage/brick/connector"
)

// BlockAttacher attaches volumes read-write to this host for a tool that
// writes them raw (boot-from-volume's image writer), and detaches them.
type BlockAttacher struct {
	Manager *Manager
	Gather  connector.GatherOptions
}

// AttachBlock attaches the volume and returns its block device; a volume
// that comes with no block device (an NFS file) is detached again.
func (b BlockAttacher) AttachBlock(ctx context.Context, volumeID string) (string, error) {
	rec, err := b.Manager.Attach(ctx, AttachOptions{Volume: volumeID, Mode: "rw", Gather: b.Gather})
	if err != nil {
		return "", err
	}
	if rec.Device == nil || rec.Device.Type != "block" {
		err := fmt.Errorf("volume %s attached without a block device to write on", volumeID)
		if derr := b.DetachVolume(ctx, volumeID); derr != nil {
			err = fmt.Errorf("%w (detach also failed: %v; run brick local-detach %s)", err, derr, volumeID)
		}
		return "", err
	}
	return rec.Device.Path, nil
}

// DetachVolume flushes and detaches the volume as local-detach does.
func (b BlockAttacher) DetachVolume(ctx context.Context, volumeID string) error {
	return b.Manager.Detach(ctx, DetachOptions{Volume: volumeID, Gather: b.Gather})
}
