package ironicapi

import (
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// ListNodes pages through nodes with gophercloud's nodes.List under the
// client's /v1/ base, which an endpoint given as http://ironic:6385 (as
// catalogs and --ironic-endpoint usually give it) lacks.
func ListNodes(client *gophercloud.ServiceClient, opts nodes.ListOptsBuilder) pagination.Pager {
	return nodes.List(volumeClient(client), opts)
}
