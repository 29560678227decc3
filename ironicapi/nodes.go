package ironicapi

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/brick-storage/brick/ident"
)

// Power states as Ironic reports them; a node whose power was never set
// has none ("").
const (
	PowerOff = "power off"
	PowerOn  = "power on"
)

// GetNode fetches a node by name or UUID with gophercloud's nodes.Get, at
// the volume API version, with errors as *apierr.Error.
func GetNode(ctx context.Context, client *gophercloud.ServiceClient, nodeRef string) (r nodes.GetResult) {
	c := call{op: "get", resource: "node", ident: nodeRef}
	if !ValidNodeIdent(nodeRef) {
		r.Err = invalid(c.String(), "node", "%s is not a node name or UUID", quote(nodeRef))
		return r
	}
	r = nodes.Get(ctx, volumeClient(client), nodeRef)
	r.Err = convert(c, r.Err)
	return r
}

// ResolveNode returns the UUID of the node named or identified by nodeRef.
// Node-scoped URLs and request bodies need the UUID: Ironic answers names
// there with 404 or 400.
func ResolveNode(ctx context.Context, client *gophercloud.ServiceClient, nodeRef string) (string, error) {
	n, err := GetNode(ctx, client, nodeRef).Extract()
	if err != nil {
		return "", err
	}
	if !ident.IsUUID(n.UUID) {
		return "", fmt.Errorf("ironic get node %s: answer has no node UUID", quote(nodeRef))
	}
	return n.UUID, nil
}

// UpdateNode applies a JSON patch to a node with gophercloud's
// nodes.Update, with errors as *apierr.Error.
func UpdateNode(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string, opts nodes.UpdateOpts) (r nodes.UpdateResult) {
	c := call{op: "update", resource: "node", ident: nodeUUID}
	if !ident.IsUUID(nodeUUID) {
		r.Err = invalid(c.String(), "node", "%s is not a UUID", quote(nodeUUID))
		return r
	}
	r = nodes.Update(ctx, volumeClient(client), nodeUUID, opts)
	r.Err = convert(c, r.Err)
	return r
}

// NodeHasPort reports whether the node has a port, reading one page of
// one port with gophercloud's ports.List (Ironic's ipxe boot interface
// refuses to deploy a node without one).
func NodeHasPort(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string) (bool, error) {
	c := call{op: "list ports of", resource: "node", ident: nodeUUID}
	if !ident.IsUUID(nodeUUID) {
		return false, invalid(c.String(), "node", "%s is not a UUID", quote(nodeUUID))
	}
	found := false
	err := ports.List(volumeClient(client), ports.ListOpts{NodeUUID: nodeUUID, Limit: 1}).EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
		ps, err := ports.ExtractPorts(page)
		found = len(ps) > 0
		return false, err
	})
	return found, convert(c, err)
}
