package ironicapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/ident"
)

// GetTarget fetches one target by UUID; opts may be nil.
func GetTarget(ctx context.Context, client *gophercloud.ServiceClient, id string, opts *GetOpts) TargetResult {
	return TargetResult{targetKind().get(ctx, client, id, opts)}
}

// TargetCreateOptsBuilder builds a target create body.
type TargetCreateOptsBuilder interface {
	ToVolumeTargetCreateMap() (map[string]any, error)
}

// TargetCreateOpts describe a new target.
type TargetCreateOpts struct {
	// NodeUUID must be the node's UUID: Ironic rejects names here.
	NodeUUID string `json:"node_uuid"`
	// VolumeType is one of VolumeTypes (Cinder's driver_volume_type).
	VolumeType string `json:"volume_type"`
	// BootIndex orders the node's volumes (0 boots first); one per node.
	BootIndex int `json:"boot_index"`
	// VolumeID is the Cinder volume's UUID.
	VolumeID string `json:"volume_id"`
	// Properties are the connection properties (Cinder's connection info data).
	Properties map[string]any `json:"properties,omitempty"`
	// Extra is free-form metadata.
	Extra map[string]any `json:"extra,omitempty"`
	// UUID picks the target's UUID; Ironic generates one when empty.
	UUID string `json:"uuid,omitempty"`
}

// ToVolumeTargetCreateMap validates the options and builds the body.
func (o TargetCreateOpts) ToVolumeTargetCreateMap() (map[string]any, error) {
	if !ident.IsUUID(o.NodeUUID) {
		return nil, fmt.Errorf("node_uuid %s is not a UUID (Ironic does not take node names here)", quote(o.NodeUUID))
	}
	if !ValidVolumeType(o.VolumeType) {
		return nil, fmt.Errorf("volume_type %s is not one of %s", quote(o.VolumeType), strings.Join(VolumeTypes, ", "))
	}
	if o.BootIndex < 0 {
		return nil, fmt.Errorf("boot_index %d is negative", o.BootIndex)
	}
	if !ident.IsUUID(o.VolumeID) {
		return nil, fmt.Errorf("volume_id %s is not a UUID", quote(o.VolumeID))
	}
	o.VolumeID = strings.ToLower(o.VolumeID)
	if o.UUID != "" && !ident.IsUUID(o.UUID) {
		return nil, fmt.Errorf("uuid %s is not a UUID", quote(o.UUID))
	}
	if err := checkKV("properties", o.Properties); err != nil {
		return nil, err
	}
	if err := checkKV("extra", o.Extra); err != nil {
		return nil, err
	}
	return gophercloud.BuildRequestBody(o, "")
}

// CreateTarget creates a target. Ironic accepts this in any power state;
// a boot index the node uses already gives apierr.ErrConflict.
func CreateTarget(ctx context.Context, client *gophercloud.ServiceClient, opts TargetCreateOptsBuilder) TargetResult {
	return TargetResult{targetKind().create(ctx, client, opts.ToVolumeTargetCreateMap)}
}

// TargetUpdateOptsBuilder builds a JSON-patch body for a target.
type TargetUpdateOptsBuilder interface {
	ToVolumeTargetUpdateMap() ([]map[string]any, error)
}

// TargetUpdateOpts is a JSON patch on a target; values are checked per path.
type TargetUpdateOpts []PatchOp

// ToVolumeTargetUpdateMap validates the patch and builds the body.
func (o TargetUpdateOpts) ToVolumeTargetUpdateMap() ([]map[string]any, error) {
	for i, op := range o {
		if err := checkTargetPatchOp(op); err != nil {
			return nil, fmt.Errorf("patch %d: %w", i, err)
		}
	}
	return patchBody(o)
}

// checkTargetPatchOp checks one patch operation's path and value.
func checkTargetPatchOp(op PatchOp) error {
	remove := op.Op == "remove"
	switch {
	case op.Path == "/node_uuid":
		return checkNodeUUIDOp(op)
	case op.Path == "/volume_type":
		if s, _ := op.Value.(string); remove || !ValidVolumeType(s) {
			return fmt.Errorf("volume_type must be replaced by one of %s", strings.Join(VolumeTypes, ", "))
		}
	case op.Path == "/boot_index":
		if n, ok := op.Value.(int); remove || !ok || n < 0 {
			return fmt.Errorf("boot_index must be replaced by an integer >= 0")
		}
	case op.Path == "/volume_id":
		if s, _ := op.Value.(string); remove || !ident.IsUUID(s) {
			return fmt.Errorf("volume_id must be replaced by a volume UUID")
		}
	case op.Path == "/extra", op.Path == "/properties":
	case strings.HasPrefix(op.Path, "/extra/"), strings.HasPrefix(op.Path, "/properties/"):
		return checkKeyPath(op.Path)
	default:
		return fmt.Errorf("path %s cannot be changed (use /node_uuid, /volume_type, /boot_index, /volume_id, /properties/KEY or /extra/KEY)", quote(op.Path))
	}
	return nil
}

// UpdateTarget applies a JSON patch to a target. Ironic refuses it
// (apierr.ErrInvalidState) unless the node is powered off.
func UpdateTarget(ctx context.Context, client *gophercloud.ServiceClient, id string, opts TargetUpdateOptsBuilder) TargetResult {
	return TargetResult{targetKind().update(ctx, client, id, opts.ToVolumeTargetUpdateMap)}
}

// DeleteTarget deletes a target. Ironic refuses it (apierr.ErrInvalidState)
// unless the node is powered off.
func DeleteTarget(ctx context.Context, client *gophercloud.ServiceClient, id string) DeleteResult {
	return targetKind().delete(ctx, client, id)
}
