package connector

import "context"

// Extender is implemented by connectors that can grow an attached volume
// online, after its backend grew it. Not every connector does: check with
// a type assertion.
//
//	if ext, ok := c.(connector.Extender); ok {
//		sz, err := ext.Extend(ctx, info, dev, 0)
//	}
type Extender interface {
	// Extend makes the host see the volume's new size on every path and
	// on the device it hands out (dev is what Connect returned, nil when
	// unknown). It refuses, changing nothing, when a path is down. A
	// volume already at its size succeeds: a cut-short run can be repeated.
	// newSize, when known (> 0), is the size in bytes the backend now
	// reports: Extend waits (bounded) until the host sees at least that.
	Extend(ctx context.Context, info ConnectionInfo, dev *Device, newSize int64) (*Resize, error)
}

// Resize is what Extend saw: the device the user opens and its size in
// bytes before and after.
type Resize struct {
	Device  string `json:"device"`
	OldSize int64  `json:"old_size"`
	NewSize int64  `json:"new_size"`
}
