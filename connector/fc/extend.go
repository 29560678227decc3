package fc

import (
	"context"
	"fmt"

	"github.com/brick-storage/brick/connector"
)

// Extend grows an attached FC volume on this host (multipath.Grow): every
// path rescanned, refused while one is not running, then the map resized
// through multipathd.
func (c *Connector) Extend(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, newSize int64) (*connector.Resize, error) {
	a, unlock, err := c.lockAttached(ctx, "fc extend", ci, dev)
	if err != nil {
		return nil, err
	}
	defer unlock()
	g, err := c.mp.Grow(ctx, a.vol, newSize)
	if err != nil {
		return nil, fmt.Errorf("fc extend: %w", err)
	}
	return &connector.Resize{Device: g.Device, OldSize: g.OldSize, NewSize: g.NewSize}, nil
}
