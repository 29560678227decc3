// Package keymanager fetches the key of an encrypted Cinder volume: from
// Barbican (gophercloud's keymanager secrets payload) in a cloud, or from
// Cinder's fixed key (a standalone Cinder's [key_manager] fixed_key) read
// from a 0600 file. Keys are returned as bytes and never printed: errors
// name the key ID and the fix, nothing of the key.
//
// Failures are *apierr.Error of these kinds (test them with errors.Is):
// apierr.ErrForbidden (the user may not read the key), ErrUnauthorized
// (the token was refused), ErrNotFound (no such key), ErrUnreachable (no
// key manager could be asked), ErrInvalid (the key ID or the key itself is
// unusable). Each keeps its cause.
package keymanager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/keymanager/v1/secrets"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ident"
)

// Unreachable is the failure of a key manager that cannot be asked, for
// reason ("no key manager configured").
func Unreachable(reason string) error { return failure(apierr.ErrUnreachable, nil, "%s", reason) }

// failure words a refusal: the kind's lead ("cannot reach the key
// manager: "), then what happened and the fix.
func failure(kind, cause error, format string, args ...any) error {
	var lead string
	switch kind {
	case apierr.ErrUnreachable:
		lead = "cannot reach the key manager: "
	case apierr.ErrInvalid:
		lead = "unusable key: "
	case apierr.ErrForbidden, apierr.ErrUnauthorized:
		lead = "the key manager refused the key "
	case apierr.ErrNotFound:
		lead = "the key manager has no such key "
	}
	return &apierr.Error{Message: lead + fmt.Sprintf(format, args...), Kind: kind, Err: cause}
}

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
		return nil, failure(apierr.ErrUnreachable, err, "no key-manager endpoint in the catalog: "+
			"Barbican must be listed for this region and interface")
	case err != nil:
		return nil, failure(apierr.ErrUnreachable, err, "its catalog endpoint did not answer as Barbican v1 (%s): "+
			"check that the key manager runs and that this host reaches it", ident.Line(err.Error(), 200))
	}
	return &Barbican{SC: sc}, nil
}

// Key fetches the secret's payload as raw bytes (Cinder stores its keys
// as application/octet-stream).
func (b *Barbican) Key(ctx context.Context, keyID string) ([]byte, error) {
	if !ident.IsUUIDLoose(keyID) {
		return nil, failure(apierr.ErrInvalid, nil, "key ID %q is not a UUID", ident.Clip(keyID, 200))
	}
	r := secrets.GetPayload(ctx, b.SC, keyID, secrets.GetPayloadOpts{PayloadContentType: "application/octet-stream"})
	if r.Err != nil {
		return nil, mapError(keyID, r.Err)
	}
	defer r.Body.Close()
	key, err := io.ReadAll(io.LimitReader(r.Body, MaxKeySize+1))
	if err != nil {
		return nil, failure(apierr.ErrUnreachable, err, "read key %s: %v", keyID, err)
	}
	if len(key) == 0 || len(key) > MaxKeySize {
		clear(key)
		return nil, failure(apierr.ErrInvalid, nil, "key %s is %d bytes", keyID, len(key))
	}
	return key, nil
}

// mapError names the fix for what Barbican answered; it keeps the status
// code as the cause but none of the body.
func mapError(keyID string, err error) error {
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		ue.Body = nil // the status is the cause; the body may hold anything
		switch ue.Actual {
		case http.StatusForbidden:
			return failure(apierr.ErrForbidden, ue, "%s (HTTP 403): the user needs a role that may read secret payloads "+
				"in the volume's project (member, not reader)", keyID)
		case http.StatusUnauthorized:
			return failure(apierr.ErrUnauthorized, ue, "%s (HTTP 401): the key manager did not accept the token", keyID)
		case http.StatusNotFound:
			return failure(apierr.ErrNotFound, ue, "%s (HTTP 404): the key was deleted or belongs to another project", keyID)
		}
		return failure(apierr.ErrUnreachable, ue, "key %s: HTTP %d", keyID, ue.Actual)
	}
	return failure(apierr.ErrUnreachable, err, "key %s: %s", keyID, ident.Line(err.Error(), 200))
}
