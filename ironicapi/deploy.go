package ironicapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/drivers"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/brick-storage/brick/ident"
)

// MaxVersion returns the newest API version this Ironic serves, read from
// its /v1 document (the header, else the body's version.version).
func MaxVersion(ctx context.Context, client *gophercloud.ServiceClient) (string, error) {
	c := call{op: "get", resource: "API version"}
	var body struct {
		Version struct {
			Version string `json:"version"`
		} `json:"version"`
	}
	resp, err := client.Get(ctx, v1Base(client), &body, &gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}})
	if err != nil {
		return "", convert(c, err)
	}
	v := strings.TrimSpace(resp.Header.Get(maxVersionHeader))
	if v == "" {
		v = strings.TrimSpace(body.Version.Version)
	}
	if _, _, err := parseVersion(v); err != nil {
		return "", invalid(c.String(), "version", "Ironic answered %s, not an API version", quote(v))
	}
	return v, nil
}

// AtLeast reports whether API version v is at least min ("1.32").
func AtLeast(v, min string) bool { return compareVersions(v, min) >= 0 }

// DriverDetails returns a hardware type's enabled and default interfaces
// with gophercloud's drivers.GetDriverDetails.
func DriverDetails(ctx context.Context, client *gophercloud.ServiceClient, name string) (*drivers.Driver, error) {
	c := call{op: "get", resource: "driver", ident: name}
	if !ValidNodeIdent(name) {
		return nil, invalid(c.String(), "driver", "%s is not a driver name", quote(name))
	}
	d, err := drivers.GetDriverDetails(ctx, volumeClient(client), name).Extract()
	return d, convert(c, err)
}

// SetProvisionState asks Ironic to move a node ("active" deploys,
// "deleted" undeploys) with gophercloud's nodes.ChangeProvisionState and
// returns once Ironic accepted it (202); the move itself is asynchronous.
func SetProvisionState(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string, target nodes.TargetProvisionState) error {
	c := call{op: "set provision state " + string(target) + " of", resource: "node", ident: nodeUUID}
	if !ident.IsUUID(nodeUUID) {
		return invalid(c.String(), "node", "%s is not a UUID", quote(nodeUUID))
	}
	opts := nodes.ProvisionStateOpts{Target: target}
	return convert(c, nodes.ChangeProvisionState(ctx, volumeClient(client), nodeUUID, opts).ExtractErr())
}
