package cinderapi

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
)

// Bodies handed to gophercloud's own calls through its builder interfaces.
var (
	_ attachments.CreateOptsBuilder           = AttachmentCreateOpts{}
	_ volumes.InitializeConnectionOptsBuilder = ConnectorOpts{}
	_ volumes.TerminateConnectionOptsBuilder  = ConnectorOpts{}
)

// AttachmentCreateOpts create a v3 attachment (attachments.Create). Without
// Connector it only reserves the volume. Unlike gophercloud's CreateOpts,
// InstanceUUID and Mode are sent only when set: Cinder refuses a null
// instance_uuid, and mode below microversion 3.54.
type AttachmentCreateOpts struct {
	VolumeID     string
	Connector    HostConnector
	Mode         string
	InstanceUUID string
}

// ToAttachmentCreateMap implements attachments.CreateOptsBuilder.
func (o AttachmentCreateOpts) ToAttachmentCreateMap() (map[string]any, error) {
	if o.VolumeID == "" {
		return nil, fmt.Errorf("attachment create: volume id is empty")
	}
	a := map[string]any{"volume_uuid": o.VolumeID}
	if len(o.Connector) > 0 {
		a["connector"] = map[string]any(o.Connector)
	}
	if o.Mode != "" {
		a["mode"] = o.Mode
	}
	if o.InstanceUUID != "" {
		a["instance_uuid"] = o.InstanceUUID
	}
	return map[string]any{"attachment": a}, nil
}

// ConnectorOpts carry the host connector to volumes.InitializeConnection
// and volumes.TerminateConnection. Unlike gophercloud's opts, every value
// keeps its JSON type (wwnns is a list, as Cinder drivers expect) and no
// key is dropped.
type ConnectorOpts struct {
	Connector HostConnector
}

// ToVolumeInitializeConnectionMap implements
// volumes.InitializeConnectionOptsBuilder.
func (o ConnectorOpts) ToVolumeInitializeConnectionMap() (map[string]any, error) {
	return o.body("os-initialize_connection")
}

// ToVolumeTerminateConnectionMap implements
// volumes.TerminateConnectionOptsBuilder.
func (o ConnectorOpts) ToVolumeTerminateConnectionMap() (map[string]any, error) {
	return o.body("os-terminate_connection")
}

func (o ConnectorOpts) body(action string) (map[string]any, error) {
	if len(o.Connector) == 0 {
		return nil, fmt.Errorf("%s: connector is empty", action)
	}
	return map[string]any{action: map[string]any{"connector": map[string]any(o.Connector)}}, nil
}

// RollDetachingResult is the result of RollDetaching.
type RollDetachingResult struct{ gophercloud.ErrResult }

// RollDetaching returns a "detaching" volume to "in-use"
// (os-roll_detaching); gophercloud has no call for it.
func RollDetaching(ctx context.Context, c *gophercloud.ServiceClient, id string) (r RollDetachingResult) {
	resp, err := c.Post(ctx, actionURL(c, id), map[string]any{"os-roll_detaching": map[string]any{}}, nil,
		&gophercloud.RequestOpts{OkCodes: []int{202}})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	return
}

// ForceDetachOptsBuilder builds the body of ForceDetach.
type ForceDetachOptsBuilder interface {
	ToForceDetachMap() (map[string]any, error)
}

// ForceDetachOpts say which attachment os-force_detach ends; both fields
// are optional.
type ForceDetachOpts struct {
	AttachmentID string
	Connector    HostConnector
}

// ToForceDetachMap implements ForceDetachOptsBuilder.
func (o ForceDetachOpts) ToForceDetachMap() (map[string]any, error) {
	body := map[string]any{}
	if o.AttachmentID != "" {
		body["attachment_id"] = o.AttachmentID
	}
	if o.Connector != nil {
		body["connector"] = map[string]any(o.Connector)
	}
	return map[string]any{"os-force_detach": body}, nil
}

// ForceDetachResult is the result of ForceDetach.
type ForceDetachResult struct{ gophercloud.ErrResult }

// ForceDetach ends an attachment whatever the volume's state
// (os-force_detach, admin only); gophercloud has no call for it.
func ForceDetach(ctx context.Context, c *gophercloud.ServiceClient, id string, opts ForceDetachOptsBuilder) (r ForceDetachResult) {
	b, err := opts.ToForceDetachMap()
	if err != nil {
		r.Err = err
		return
	}
	resp, err := c.Post(ctx, actionURL(c, id), b, nil, &gophercloud.RequestOpts{OkCodes: []int{202}})
	_, r.Header, r.Err = gophercloud.ParseResponse(resp, err)
	return
}

func actionURL(c *gophercloud.ServiceClient, id string) string {
	return c.ServiceURL("volumes", id, "action")
}
