package ironicapi

import (
	"strconv"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
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
// MinMicroversion and the Ironic version header, without changing the
// caller's client (it may be shared with code using other versions).
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

// parseVersion splits "1.32" into (1, 32); ok is false for anything else.
func parseVersion(v string) (major, minor int, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(v), ".")
	if !found {
		return 0, 0, false
	}
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || ma < 0 || mi < 0 {
		return 0, 0, false
	}
	return ma, mi, true
}

// compareVersions orders API versions; an unparsable version sorts first.
func compareVersions(a, b string) int {
	amaj, amin, aok := parseVersion(a)
	bmaj, bmin, bok := parseVersion(b)
	switch {
	case !aok && !bok:
		return 0
	case !aok:
		return -1
	case !bok:
		return 1
	case amaj != bmaj:
		return cmpInt(amaj, bmaj)
	}
	return cmpInt(amin, bmin)
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
