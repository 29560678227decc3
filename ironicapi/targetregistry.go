package ironicapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
)

// TargetRegistry registers attached volumes as a node's volume targets:
// what `brick local-attach --ironic-node` and `brick ironic attach-volume`
// use (it satisfies attach.TargetRegistry).
type TargetRegistry struct {
	Client *gophercloud.ServiceClient
}

// CreateTarget creates the target for volumeID on node (name or UUID),
// with volumeType taken from Cinder's driver_volume_type and properties
// from its connection info data. It returns the target's UUID.
func (r TargetRegistry) CreateTarget(ctx context.Context, node, volumeID, volumeType string, bootIndex int, properties map[string]any) (string, error) {
	nodeUUID, err := ResolveNode(ctx, r.Client, node)
	if err != nil {
		return "", err
	}
	t, err := CreateTarget(ctx, r.Client, TargetCreateOpts{
		NodeUUID: nodeUUID, VolumeType: volumeType, BootIndex: bootIndex, VolumeID: volumeID, Properties: properties,
	}).Extract()
	if err != nil {
		return "", err
	}
	return t.UUID, nil
}

// DeleteTarget deletes the target; one already gone is success. When the
// node is not powered off, the error (ErrNotPoweredOff) says how to finish
// by hand.
func (r TargetRegistry) DeleteTarget(ctx context.Context, node, targetUUID string) error {
	err := DeleteTarget(ctx, r.Client, targetUUID).ExtractErr()
	var e *Error
	switch {
	case err == nil, errors.Is(err, ErrNotFound):
		return nil
	case errors.As(err, &e) && e.Kind == ErrNotPoweredOff:
		e.Hint = fmt.Sprintf("Ironic deletes volume targets only while the node is powered off: power node %s off (openstack baremetal node power off %s), then run: brick ironic target delete %s",
			node, node, targetUUID)
		return e
	}
	return err
}
