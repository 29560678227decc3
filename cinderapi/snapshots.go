package cinderapi

import (
	"cmp"
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/snapshots"

	"github.com/brick-storage/brick/apierr"
)

// Snapshot is gophercloud's snapshot.
type Snapshot = snapshots.Snapshot

// DefaultSnapshotTimeout bounds the wait for a snapshot to become
// available, and for a deleted one to disappear.
const DefaultSnapshotTimeout = 5 * time.Minute

// GetSnapshot fetches a snapshot by ID.
func (c *Client) GetSnapshot(ctx context.Context, id string) (*Snapshot, error) {
	s, err := snapshots.Get(ctx, c.SC, id).Extract()
	if err != nil {
		return nil, mapError("snapshot get", id, err)
	}
	return s, nil
}

// Snapshots lists the project's snapshots, filtered by exact name and by
// volume when those are set.
func (c *Client) Snapshots(ctx context.Context, name, volumeID string) ([]Snapshot, error) {
	var out []Snapshot
	query, err := snapshots.ListOpts{Name: name, VolumeID: volumeID}.ToSnapshotListQuery()
	if err == nil {
		err = walk(ctx, c.SC, "snapshots", query, func(list []snapshots.Snapshot) {
			for _, s := range list {
				if name == "" || s.Name == name { // some releases match names as substrings
					out = append(out, s)
				}
			}
		})
	}
	return out, mapError("snapshot list", volumeID, err)
}

// CreateSnapshot snapshots a volume (force: an in-use one too) and waits,
// bounded by timeout (DefaultSnapshotTimeout when zero) or ctx, until
// Cinder reports it available. A snapshot that ends in error is deleted
// again and reported.
func (c *Client) CreateSnapshot(ctx context.Context, volumeID, name string, metadata map[string]string, timeout time.Duration) (*Snapshot, error) {
	s, err := snapshots.Create(ctx, c.SC, snapshots.CreateOpts{VolumeID: volumeID, Name: name, Force: true, Metadata: metadata}).Extract()
	if err != nil {
		return nil, mapError("snapshot create", volumeID, err)
	}
	if s.ID == "" {
		return nil, &apierr.Error{Service: Service, Op: "snapshot create", Volume: volumeID, Kind: apierr.ErrUnexpected, Message: "Cinder returned no snapshot ID"}
	}
	return c.snapshotWait(timeout).created(ctx, "snapshot create", volumeID, s.ID)
}

// DeleteSnapshot deletes a snapshot and waits, bounded by timeout
// (DefaultSnapshotTimeout when zero) or ctx, until it is gone. A snapshot
// already gone is success.
func (c *Client) DeleteSnapshot(ctx context.Context, id string, timeout time.Duration) error {
	return c.snapshotWait(timeout).deleted(ctx, "snapshot delete", id)
}

// snapshotWait watches snapshots, bounded by timeout
// (DefaultSnapshotTimeout when zero).
func (c *Client) snapshotWait(timeout time.Duration) watched[Snapshot] {
	return watched[Snapshot]{
		what: "snapshot", timeout: cmp.Or(max(timeout, 0), DefaultSnapshotTimeout), gap: c.pollGap(100 * time.Millisecond),
		get:    func(ctx context.Context, id string) (*Snapshot, error) { return c.GetSnapshot(ctx, id) },
		status: func(s *Snapshot) string { return s.Status },
		del: func(ctx context.Context, id string) error {
			return snapshots.Delete(ctx, c.SC, id).ExtractErr()
		},
	}
}
