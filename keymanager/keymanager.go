// Package keymanager fetches the key of an encrypted Cinder volume: from
// Barbican (gophercloud's keymanager secrets payload) in a cloud, or from
// Cinder's fixed key (a standalone Cinder's [key_manager] fixed_key) read
// from a 0600 file. Keys are returned as bytes and never printed: errors
// name the key ID and the fix, nothing of the key.
package keymanager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/keymanager/v1/secrets"

	"github.com/brick-storage/brick/ident"
)

// Errors a caller turns into a refusal; each wraps the cause.
var (
	// ErrForbidden: the key manager refused this user the key.
	ErrForbidden = errors.New("the key manager refused the key")
	// ErrNotFound: the key ID is unknown to the key manager.
	ErrNotFound = errors.New("the key manager has no such key")
	// ErrUnreachable: no key manager could be asked.
	ErrUnreachable = errors.New("cannot reach the key manager")
	// ErrBadKey: the key ID or the key itself is unusable.
	ErrBadKey = errors.New("unusable key")
)

// MaxKeySize bounds a key read from a server or a file (Cinder's keys are
// 32 or 64 bytes).
const MaxKeySize = 4096

// Getter returns a volume's key by its encryption_key_id.
type Getter interface {
	Key(ctx context.Context, keyID string) ([]byte, error)
}

// Barbican reads keys from Barbican's secrets payload.
type Barbican struct {
	SC *gophercloud.ServiceClient
}

// Source hands out the Barbican client: osauth.Clients.KeyManager, which
// finds the key-manager endpoint in Keystone's catalog.
type Source func(ctx context.Context) (*gophercloud.ServiceClient, error)

// NewBarbican asks source for the key manager's client and says what to
// do when there is none.
func NewBarbican(ctx context.Context, source Source) (*Barbican, error) {
	sc, err := source(ctx)
	var notFound *gophercloud.ErrEndpointNotFound
	switch {
	case errors.As(err, &notFound):
		return nil, fmt.Errorf("%w: no key-manager endpoint in the catalog: "+
			"Barbican must be listed for this region and interface", ErrUnreachable)
	case err != nil:
		return nil, fmt.Errorf("%w: its catalog endpoint did not answer as Barbican v1 (%s): "+
			"check that the key manager runs and that this host reaches it", ErrUnreachable, ident.Line(err.Error(), 200))
	}
	return &Barbican{SC: sc}, nil
}

// Key fetches the secret's payload as raw bytes (Cinder stores its keys
// as application/octet-stream).
func (b *Barbican) Key(ctx context.Context, keyID string) ([]byte, error) {
	if !ident.IsUUIDLoose(keyID) {
		return nil, fmt.Errorf("%w: key ID %q is not a UUID", ErrBadKey, ident.Clip(keyID, 200))
	}
	r := secrets.GetPayload(ctx, b.SC, keyID, secrets.GetPayloadOpts{PayloadContentType: "application/octet-stream"})
	if r.Err != nil {
		return nil, mapError(keyID, r.Err)
	}
	defer r.Body.Close()
	key, err := io.ReadAll(io.LimitReader(r.Body, MaxKeySize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read key %s: %v", ErrUnreachable, keyID, err)
	}
	if len(key) == 0 || len(key) > MaxKeySize {
		clear(key)
		return nil, fmt.Errorf("%w: key %s is %d bytes", ErrBadKey, keyID, len(key))
	}
	return key, nil
}

// mapError names the fix for what Barbican answered; it keeps the status
// code as the cause but none of the body.
func mapError(keyID string, err error) error {
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		switch ue.Actual {
		case http.StatusForbidden:
			return fmt.Errorf("%w %s (HTTP 403): the user needs a role that may read secret payloads "+
				"in the volume's project (member, not reader)", ErrForbidden, keyID)
		case http.StatusUnauthorized:
			return fmt.Errorf("%w %s (HTTP 401): the key manager did not accept the token", ErrForbidden, keyID)
		case http.StatusNotFound:
			return fmt.Errorf("%w %s (HTTP 404): the key was deleted or belongs to another project", ErrNotFound, keyID)
		}
		return fmt.Errorf("%w: key %s: HTTP %d", ErrUnreachable, keyID, ue.Actual)
	}
	return fmt.Errorf("%w: key %s: %s", ErrUnreachable, keyID, ident.Line(err.Error(), 200))
}
