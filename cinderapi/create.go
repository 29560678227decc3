package cinderapi

import (
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
	var got *Volume
	err = c.poll(ctx, "create", v.ID, timeout, func(cur *Volume) (bool, error) {
		if cur == nil {
			return false, &apierr.Error{Service: Service, Op: "create", Volume: o.Name, Kind: apierr.ErrNotFound, Message: fmt.Sprintf("volume %s disappeared while being created", v.ID)}
		}
		switch cur.Status {
		case "available":
			got = cur
			return true, nil
		case "error":
			_ = volumes.Delete(ctx, c.SC, v.ID, nil).ExtractErr()
			return false, &apierr.Error{Service: Service, Op: "create", Volume: o.Name, Kind: apierr.ErrInvalidState,
				Message: fmt.Sprintf("Cinder could not create the volume (%s ended in status error; deleted again)", v.ID)}
		}
		return false, nil
	})
	return got, err
}

// DeleteVolume deletes a volume and waits, bounded by timeout
// (DefaultCreateTimeout when zero) or ctx, until Cinder no longer lists
// it. A volume already gone is success.
func (c *Client) DeleteVolume(ctx context.Context, id string, timeout time.Duration) error {
	err := volumes.Delete(ctx, c.SC, id, nil).ExtractErr()
	if err != nil {
		err = mapError("delete", id, err)
		if isKind(err, apierr.ErrNotFound) {
			return nil
		}
		return err
	}
	return c.poll(ctx, "delete", id, timeout, func(cur *Volume) (bool, error) {
		if cur == nil {
			return true, nil
		}
		if cur.Status == "error_deleting" {
			return false, &apierr.Error{Service: Service, Op: "delete", Volume: id, Kind: apierr.ErrInvalidState, Message: "Cinder could not delete the volume (status error_deleting)"}
		}
		return false, nil
	})
}

// poll reads the volume, with a growing gap, until done says so or fails;
// done sees nil once the volume is gone.
func (c *Client) poll(ctx context.Context, step, id string, timeout time.Duration, done func(*Volume) (bool, error)) error {
	get := func(ctx context.Context) (*Volume, error) { return c.Volume(ctx, id) }
	return pollUntil(ctx, step, id, timeout, get, func(v *Volume) string { return v.Status }, done)
}

// pollUntil reads a resource with get, with a growing gap, until done says
// so or fails; done sees nil once get says it is not found.
func pollUntil[T any](ctx context.Context, step, id string, timeout time.Duration,
	get func(context.Context) (*T, error), status func(*T) string, done func(*T) (bool, error)) error {
	if timeout <= 0 {
		timeout = DefaultCreateTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	gap := 100 * time.Millisecond
	timer := time.NewTimer(gap)
	defer timer.Stop()
	last := "nothing"
	for {
		v, err := get(ctx)
		switch {
		case err != nil && isKind(err, apierr.ErrNotFound):
			v, err = nil, nil
		case err != nil && ctx.Err() == nil:
			return err
		}
		if err == nil {
			if v != nil {
				last = status(v)
			}
			if ok, derr := done(v); ok || derr != nil {
				return derr
			}
		}
		select {
		case <-ctx.Done():
			return &apierr.Error{Service: Service, Op: step, Volume: id, Kind: apierr.ErrUnreachable,
				Message: fmt.Sprintf("Cinder did not finish within %s (last status: %s)", timeout, last)}
		case <-timer.C:
		}
		gap = min(2*gap, 2*time.Second)
		timer.Reset(gap)
	}
}
