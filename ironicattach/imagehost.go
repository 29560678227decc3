package ironicattach

import (
	"context"
	"fmt"
	"time"

	"github.com/brick-storage/brick/cinderapi"
)

// LocalDisk attaches a volume to this host as a block device and detaches
// it again (attach.BlockAttacher).
type LocalDisk interface {
	AttachBlock(ctx context.Context, volumeID string) (string, error)
	DetachVolume(ctx context.Context, volumeID string) error
}

// CinderImageHost is ImageHost on a Cinder client and this host's
// attacher: what boot-from-volume --image runs on.
type CinderImageHost struct {
	Cinder *cinderapi.Client
	Local  LocalDisk
}

// CreateVolume makes the volume the image goes on, marked as brick's.
func (h CinderImageHost) CreateVolume(ctx context.Context, name string, size int) (*cinderapi.Volume, error) {
	return h.Cinder.CreateVolume(ctx, cinderapi.CreateVolumeOpts{Name: name, SizeGiB: size,
		Metadata: map[string]string{"brick-boot-image": "true"}}, 0)
}

// DeleteVolume deletes a volume CreateVolume made and waits until it is gone.
func (h CinderImageHost) DeleteVolume(ctx context.Context, id string) error {
	return h.Cinder.DeleteVolume(ctx, id, 0)
}

// Attach attaches the volume here and returns its block device.
func (h CinderImageHost) Attach(ctx context.Context, id string) (string, error) {
	return h.Local.AttachBlock(ctx, id)
}

// Detach flushes and detaches the volume.
func (h CinderImageHost) Detach(ctx context.Context, id string) error {
	return h.Local.DetachVolume(ctx, id)
}

// WriteProgress is the status line's detail while an image is written:
// "wrote 5 of 20 MiB (25%, 2.5 MiB/s)".
func WriteProgress(done, total int64, took time.Duration) string {
	pct := 100 * float64(done) / float64(max(total, 1))
	rate := float64(done) / (1 << 20) / max(took.Seconds(), 1e-3)
	return fmt.Sprintf("wrote %d of %d MiB (%.0f%%, %.1f MiB/s)", done>>20, (total+1<<20-1)>>20, pct, rate)
}
