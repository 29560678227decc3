package fc

import (
	"context"
	"fmt"

	"github.com/brick-storage/brick/connector"
)

var _ connector.Extender = (*Connector)(nil)

// Extend grows an attached FC volume on this host (multipath.Grow): every
// path rescanned, refused while one is not running, then the map resized
// through multipathd.
func (c *Connector) Extend(ctx context.Context, ci connector.ConnectionInfo, dev *connector.Device, newSize int64) (*connector.Resize, error) {
	info, err := c.parse(ci)
	if err != nil {
		return nil, err
	}
	unlock, err := c.lock(ctx, info)
	if err != nil {
		return nil, fmt.Errorf("fc extend: %w", err)
	}
	defer unlock()
	a, err := c.find(info, dev)
	if err != nil {
		return nil, fmt.Errorf("fc extend: %w", err)
	}
	g, err := c.mp.Grow(ctx, a.vol, newSize)
	if err != nil {
		return nil, fmt.Errorf("fc extend: %w", err)
	}
	return &connector.Resize{Device: a.vol.DevicePaths()[0], OldSize: g.OldSize, NewSize: g.NewSize}, nil
}
