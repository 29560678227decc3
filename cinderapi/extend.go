package cinderapi

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/brick-storage/brick/apierr"
)

// MVExtendInUse: os-extend accepts an in-use volume (Pike).
var MVExtendInUse = Microversion{3, 42}

// DefaultExtendTimeout bounds the wait for Cinder to finish an extend.
const DefaultExtendTimeout = 5 * time.Minute

// ExtendVolume asks Cinder to grow a volume to newSize GiB (os-extend, at
// microversion 3.42 or later so an in-use volume may grow) and waits,
// bounded by timeout (DefaultExtendTimeout when zero) or ctx, until Cinder
// reports the new size with the volume back in-use or available. A volume
// already at newSize is not extended again. A cloud older than 3.42 gets a
// one-line apierr.ErrUnsupported error before anything is sent.
func (c *Client) ExtendVolume(ctx context.Context, id string, newSize int, timeout time.Duration) (*Volume, error) {
	if newSize <= 0 {
		return nil, &apierr.Error{Service: Service, Op: "extend", Volume: id, Kind: apierr.ErrInvalid, Message: fmt.Sprintf("new size %d GiB: must be positive", newSize)}
	}
	sc, err := c.extendClient()
	if err != nil {
		return nil, &apierr.Error{Service: Service, Op: "extend", Volume: id, Kind: apierr.ErrUnsupported, Message: err.Error()}
	}
	v, err := c.Volume(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case v.Size == newSize:
		return v, nil
	case v.Size > newSize:
		return nil, &apierr.Error{Service: Service, Op: "extend", Volume: id, Kind: apierr.ErrInvalid,
			Message: fmt.Sprintf("the volume is %d GiB already; volumes only grow", v.Size)}
	}
	err = volumes.ExtendSize(ctx, sc, id, volumes.ExtendSizeOpts{NewSize: newSize}).ExtractErr()
	if err != nil {
		return nil, mapError("extend", id, err)
	}
	return c.waitExtended(ctx, id, newSize, timeout)
}

// extendClient is the service client at a microversion that extends in-use
// volumes: the negotiated one when high enough, else 3.42 when the server
// supports it.
func (c *Client) extendClient() (*gophercloud.ServiceClient, error) {
	if c.Version.AtLeast(MVExtendInUse) {
		return c.SC, nil
	}
	if c.Max.IsZero() || !c.Max.AtLeast(MVExtendInUse) {
		top := c.Max
		if top.IsZero() {
			top = c.Version
		}
		return nil, fmt.Errorf("growing an attached volume needs Block Storage API microversion %s or later (Cinder Pike); this cloud offers up to %s", MVExtendInUse, top)
	}
	cp := *c.SC
	cp.Microversion = MVExtendInUse.String()
	return &cp, nil
}

// waitExtended polls the volume, with a growing gap, until it shows
// newSize and a settled status; error_extending fails at once.
func (c *Client) waitExtended(ctx context.Context, id string, newSize int, timeout time.Duration) (*Volume, error) {
	if timeout <= 0 {
		timeout = DefaultExtendTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	gap := c.pollGap(200 * time.Millisecond)
	timer := time.NewTimer(gap)
	defer timer.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return nil, &apierr.Error{Service: Service, Op: "extend", Volume: id, Kind: apierr.ErrUnreachable,
				Message: fmt.Sprintf("Cinder did not finish within %s (last seen: %s)", timeout, last)}
		case <-timer.C:
		}
		v, err := c.Volume(ctx, id)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		if v != nil {
			last = fmt.Sprintf("%s, %d GiB", v.Status, v.Size)
			switch {
			case v.Status == "error_extending" || v.Status == "error":
				return nil, &apierr.Error{Service: Service, Op: "extend", Volume: id, Kind: apierr.ErrInvalidState,
					Message: fmt.Sprintf("Cinder failed to extend the volume (status %s, %d GiB)", v.Status, v.Size)}
			case v.Size >= newSize && (v.Status == "in-use" || v.Status == "available"):
				return v, nil
			}
		}
		gap = min(2*gap, 2*time.Second)
		timer.Reset(gap)
	}
}
