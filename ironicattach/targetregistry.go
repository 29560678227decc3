package ironicattach

import (
	"context"
	"errors"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ironicapi"
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
// tag, when set, goes into the target's extra under TagKey.
func (r TargetRegistry) CreateTarget(ctx context.Context, node, volumeID, volumeType string, bootIndex int, properties map[string]any, tag string) (string, error) {
	nodeUUID, err := ironicapi.ResolveNode(ctx, r.Client, node)
	if err != nil {
		return "", err
	}
	opts := ironicapi.TargetCreateOpts{NodeUUID: nodeUUID, VolumeType: volumeType, BootIndex: bootIndex, VolumeID: volumeID, Properties: properties}
	if tag != "" {
		opts.Extra = map[string]any{TagKey: tag}
	}
	t, err := ironicapi.CreateTarget(ctx, r.Client, opts).Extract()
	if err != nil {
		return "", err
	}
	return t.UUID, nil
}

// TagKey is the key of a target's extra under which brick keeps the tag
// of the local-attach that created it.
const TagKey = "brick_attach"

// FindTarget returns the UUID of node's target for volumeID whose extra
// carries tag, or "" when there is none (or the node is gone).
func (r TargetRegistry) FindTarget(ctx context.Context, node, volumeID, tag string) (string, error) {
	nodeUUID, err := ironicapi.ResolveNode(ctx, r.Client, node)
	if err != nil {
		if errors.Is(err, apierr.ErrNotFound) {
			return "", nil
		}
		return "", err
	}
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(r.Client, nodeUUID, ironicapi.TargetListOpts{Detail: true}), 0)
	if err != nil {
		return "", err
	}
	for _, t := range targets {
		if t.VolumeID == volumeID && t.Extra[TagKey] == tag {
			return t.UUID, nil
		}
	}
	return "", nil
}

// DeleteTarget deletes the target; one already gone is success. When the
// node is not powered off, the error (apierr.ErrInvalidState) says how to finish
// by hand.
func (r TargetRegistry) DeleteTarget(ctx context.Context, node, targetUUID string) error {
	err := ironicapi.DeleteTarget(ctx, r.Client, targetUUID).ExtractErr()
	var e *apierr.Error
	switch {
	case err == nil, errors.Is(err, apierr.ErrNotFound):
		return nil
	case errors.As(err, &e) && e.Service == ironicapi.Service && e.Kind == apierr.ErrInvalidState:
		e.Hint = fmt.Sprintf("Ironic deletes volume targets only while the node is powered off: power node %s off (openstack baremetal node power off %s), then run: brick ironic target delete %s",
			node, node, targetUUID)
		return e
	}
	return err
}
