package ironicapi

import (
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
)

// MinMicroversion is the first Ironic API version with volume connectors
// and targets. Below it Ironic answers the volume URLs with a bare 404.
const MinMicroversion = "1.32"

// versionHeader is the header Ironic reads the requested API version from
// and reports its supported range in (with -Minimum-/-Maximum-).
const (
	versionHeader    = "X-OpenStack-Ironic-API-Version"
	maxVersionHeader = "X-OpenStack-Ironic-API-Maximum-Version"
)

// volumeClient returns a shallow copy of client that sends at least
// MinMicroversion and the Ironic version header, with its resource base
// at /v1/, without changing the caller's client (it may be shared with
// code using other versions).
func volumeClient(client *gophercloud.ServiceClient) *gophercloud.ServiceClient {
	c := *client
	if c.Type == "" {
		// gophercloud sends the Ironic header only for this type; a
		// hand-built ServiceClient may leave it empty.
		c.Type = "baremetal"
	}
	if compareVersions(c.Microversion, MinMicroversion) < 0 {
		c.Microversion = MinMicroversion
	}
	// gophercloud's own baremetal requests (nodes) join paths to the
	// resource base: give them the /v1/ base the endpoint may lack.
	c.ResourceBase = v1Base(client)
	if c.MoreHeaders != nil {
		// MoreHeaders are applied after the microversion and would win:
		// drop a stale version pin there.
		h := make(map[string]string, len(c.MoreHeaders))
		for k, v := range c.MoreHeaders {
			if !strings.EqualFold(k, versionHeader) && !strings.EqualFold(k, "OpenStack-API-Version") {
				h[k] = v
			}
		}
		c.MoreHeaders = h
	}
	return &c
}

// compareVersions orders API versions (gophercloud's ParseMicroversion
// reads them); an unparsable or negative version sorts first.
func compareVersions(a, b string) int {
	amaj, amin, aerr := parseVersion(a)
	bmaj, bmin, berr := parseVersion(b)
	switch {
	case aerr != nil && berr != nil:
		return 0
	case aerr != nil:
		return -1
	case berr != nil:
		return 1
	case amaj != bmaj:
		return cmpInt(amaj, bmaj)
	}
	return cmpInt(amin, bmin)
}

func parseVersion(v string) (major, minor int, err error) {
	major, minor, err = utils.ParseMicroversion(strings.TrimSpace(v))
	if err == nil && (major < 0 || minor < 0) {
		err = errNegativeVersion
	}
	return major, minor, err
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
