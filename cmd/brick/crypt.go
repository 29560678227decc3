package main

import (
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/keymanager"
	"github.com/brick-storage/brick/osauth"
)

// cryptAccess is how local-attach gets the keys of encrypted volumes:
// Barbican from the catalog of the Keystone session Cinder uses, and
// Cinder's fixed key when a key file is set. A missing key manager is
// reported only when a volume needs it.
func (a *app) cryptAccess(c attach.Cinder, fixedKeyFile string) (*attach.Crypt, error) {
	cr := &attach.Crypt{}
	if fixedKeyFile != "" {
		f, err := keymanager.LoadFixed(a.host.FS, fixedKeyFile)
		if err != nil {
			return nil, usageError{fmt.Errorf("--fixed-key-file: %w", err)}
		}
		cr.Fixed = f
	}
	cl, ok := c.(*cinderapi.Client)
	if !ok || cl.SC == nil || cl.SC.ProviderClient == nil || cl.SC.ProviderClient.EndpointLocator == nil {
		cr.KeysErr = fmt.Errorf("%w: without Keystone there is no Barbican to ask: "+
			"for a standalone Cinder with a fixed key set --fixed-key-file, or use --no-decrypt for the ciphertext", keymanager.ErrUnreachable)
		return cr, nil
	}
	o, err := osauth.Resolve(a.authOptions())
	if err != nil {
		return nil, err
	}
	// The interface names osauth accepts for Cinder's endpoint.
	eo := gophercloud.EndpointOpts{Region: o.RegionName, Availability: gophercloud.AvailabilityPublic}
	switch strings.TrimSuffix(strings.ToLower(o.Interface), "url") {
	case "internal":
		eo.Availability = gophercloud.AvailabilityInternal
	case "admin":
		eo.Availability = gophercloud.AvailabilityAdmin
	}
	if b, err := keymanager.NewBarbican(cl.SC.ProviderClient, eo); err != nil {
		cr.KeysErr = err
	} else {
		cr.Keys = b
	}
	return cr, nil
}
