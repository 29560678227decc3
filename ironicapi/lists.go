package ironicapi

import (
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// ConnectorListOpts and TargetListOpts filter, sort and page a connector
// or target list.
type (
	ConnectorListOpts = ListOpts
	TargetListOpts    = ListOpts
)

// ListConnectors lists volume connectors; ListTargets lists volume
// targets. Every page keeps every filter.
func ListConnectors(client *gophercloud.ServiceClient, opts ListOptsBuilder) pagination.Pager {
	return connectorKind().list(client, "", opts)
}

func ListTargets(client *gophercloud.ServiceClient, opts ListOptsBuilder) pagination.Pager {
	return targetKind().list(client, "", opts)
}

// ListNodeConnectors and ListNodeTargets list one node's records through
// /v1/nodes/<uuid>/volume/... (which accepts a UUID only).
func ListNodeConnectors(client *gophercloud.ServiceClient, nodeUUID string, opts ListOptsBuilder) pagination.Pager {
	return connectorKind().list(client, nodeUUID, opts)
}

func ListNodeTargets(client *gophercloud.ServiceClient, nodeUUID string, opts ListOptsBuilder) pagination.Pager {
	return targetKind().list(client, nodeUUID, opts)
}
