package ironicapi

import (
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
)

// v1URL joins parts under the client's /v1/ base. Keystone catalogs and
// users give the Ironic endpoint with or without /v1; both work.
func v1URL(client *gophercloud.ServiceClient, parts ...string) string {
	base := client.ResourceBaseURL()
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	if !strings.HasSuffix(base, "/v1/") {
		base += "v1/"
	}
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = url.PathEscape(p)
	}
	return base + strings.Join(esc, "/")
}

func nodeURL(c *gophercloud.ServiceClient, ident string) string {
	return v1URL(c, "nodes", ident)
}
