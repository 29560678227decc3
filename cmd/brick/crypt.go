package main

import (
	"context"
	"fmt"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/keymanager"
	"github.com/brick-storage/brick/osauth"
)

// cryptAccess is how local-attach gets the keys of encrypted volumes:
// Barbican from the catalog of the Keystone session Cinder uses, and
// Cinder's fixed key when a key file is set. A missing key manager is
// reported only when a volume needs it.
func (a *app) cryptAccess(ctx context.Context, c attach.Cinder, fixedKeyFile string) (*attach.Crypt, error) {
	cr := &attach.Crypt{}
	if fixedKeyFile != "" {
		f, err := keymanager.LoadFixed(a.host.FS, fixedKeyFile, a.trust.CheckFile)
		if err != nil {
			return nil, usageError{Err: fmt.Errorf("--fixed-key-file: %w", err)}
		}
		cr.Fixed = f
	}
	if !a.hasCatalog(c) {
		cr.KeysErr = keymanager.Unreachable("without Keystone there is no Barbican to ask: " +
			"for a standalone Cinder with a fixed key set --fixed-key-file, or use --no-decrypt for the ciphertext")
		return cr, nil
	}
	if b, err := keymanager.NewBarbican(ctx, a.cloud().KeyManager); err != nil {
		cr.KeysErr = err
	} else {
		cr.Keys = b
	}
	return cr, nil
}

// hasCatalog: c is a Cinder client of a Keystone session, whose catalog
// lists Barbican.
func (a *app) hasCatalog(c attach.Cinder) bool {
	if cl, ok := c.(*cinderapi.Client); !ok || cl == nil {
		return false
	}
	o, err := a.cloud().Options()
	return err == nil && o.AuthType != osauth.AuthNoAuth && o.AuthType != osauth.AuthHTTPBasic
}
