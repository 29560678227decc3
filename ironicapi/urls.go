package ironicapi

import (
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
)

// v1Base is the client's /v1/ base. Keystone catalogs and users give the
// Ironic endpoint with or without /v1; both work.
func v1Base(client *gophercloud.ServiceClient) string {
	base := client.ResourceBaseURL()
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	if !strings.HasSuffix(base, "/v1/") {
		base += "v1/"
	}
	return base
}

// v1URL joins escaped parts under the client's /v1/ base.
func v1URL(client *gophercloud.ServiceClient, parts ...string) string {
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = url.PathEscape(p)
	}
	return v1Base(client) + strings.Join(esc, "/")
}

// collectionURL is /v1/volume/<connectors|targets>.
func (k volumeKind) collectionURL(c *gophercloud.ServiceClient) string {
	return v1URL(c, "volume", k.collection)
}

// itemURL is /v1/volume/<connectors|targets>/<uuid>.
func (k volumeKind) itemURL(c *gophercloud.ServiceClient, id string) string {
	return v1URL(c, "volume", k.collection, id)
}

// nodeURL is /v1/nodes/<uuid>/volume/<connectors|targets>.
func (k volumeKind) nodeURL(c *gophercloud.ServiceClient, nodeUUID string) string {
	return v1URL(c, "nodes", nodeUUID, "volume", k.collection)
}
