package cinderapi

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/brick-storage/brick/apierr"
)

// DefaultCreateTimeout bounds the wait for a new volume to become
// available, and for a deleted one to disappear.
const DefaultCreateTimeout = 90 * time.Second

// CreateVolumeOpts are the fields of a new volume brick sets.
type CreateVolumeOpts struct {
	Name             string
	SizeGiB          int
	VolumeType       string
	AvailabilityZone string
	Metadata         map[string]string
	// SnapshotID creates the volume from this snapshot; SourceVolID clones
	// this volume. At most one of them.
	SnapshotID  string
	SourceVolID string
}

// CreateVolume creates a volume and waits, bounded by timeout
// (DefaultCreateTimeout when zero) or ctx, until Cinder reports it
// available. A volume that ends in error is deleted again and reported;
// one still creating when the time is up is left for the caller, named
// in the error.
func (c *Client) CreateVolume(ctx context.Context, o CreateVolumeOpts, timeout time.Duration) (*Volume, error) {
	if o.SizeGiB <= 0 {
		return nil, &apierr.Error{Service: Service, Op: "create", Volume: o.Name, Kind: apierr.ErrInvalid, Message: fmt.Sprintf("size %d GiB: must be positive", o.SizeGiB)}
	}
	v, err := volumes.Create(ctx, c.SC, volumes.CreateOpts{
		Name: o.Name, Size: o.SizeGiB, VolumeType: o.VolumeType,
		AvailabilityZone: o.AvailabilityZone, Metadata: o.Metadata,
		SnapshotID: o.SnapshotID, SourceVolID: o.SourceVolID,
	}, nil).Extract()
	if err != nil {
		return nil, mapError("create", o.Name, err)
	}
	if v.ID == "" {
		return nil, &apierr.Error{Service: Service, Op: "create", Volume: o.Name, Kind: apierr.ErrUnexpected, Message: "Cinder returned no volume ID"}
	}
	return c.volumeWait(timeout).created(ctx, "create", o.Name, v.ID)
}

// DeleteVolume deletes a volume and waits, bounded by timeout
// (DefaultCreateTimeout when zero) or ctx, until Cinder no longer lists
// it. A volume already gone is success.
func (c *Client) DeleteVolume(ctx context.Context, id string, timeout time.Duration) error {
	return c.volumeWait(timeout).deleted(ctx, "delete", id)
}

// volumeWait watches volumes, bounded by timeout (DefaultCreateTimeout
// when zero).
func (c *Client) volumeWait(timeout time.Duration) watched[Volume] {
	return watched[Volume]{
		what: "volume", timeout: cmp.Or(max(timeout, 0), DefaultCreateTimeout), gap: c.pollGap(100 * time.Millisecond),
		get:    func(ctx context.Context, id string) (*Volume, error) { return c.Volume(ctx, id) },
		status: func(v *Volume) string { return v.Status },
		del: func(ctx context.Context, id string) error {
			return volumes.Delete(ctx, c.SC, id, nil).ExtractErr()
		},
	}
}
