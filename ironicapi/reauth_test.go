package ironicapi

import (
	"errors"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
)

// TestRenewalFailureIsOneLine: gophercloud reports a failed token renewal
// with both errors side by side and the first one's whole body; brick
// names the call and the renewal's own message.
func TestRenewalFailureIsOneLine(t *testing.T) {
	orig := gophercloud.ErrUnexpectedResponseCode{Method: "GET", URL: "http://ironic/v1/volume/connectors", Actual: 401,
		Body: []byte(`{"error":{"code":401,"message":"The request you have made requires authentication."}}`)}
	renew := errors.New("renew the token at http://ks/v3: Keystone refused the credentials that worked at the start")
	err := convert(call{op: "list", resource: "volume connectors"},
		&gophercloud.ErrUnableToReauthenticate{ErrOriginal: orig, ErrReauth: renew})
	require.ErrorIs(t, err, apierr.ErrUnauthorized)
	require.ErrorIs(t, err, renew)
	require.Equal(t, "ironic list volume connectors: Ironic refused the token (expired or revoked) and getting a new one failed: "+
		"renew the token at http://ks/v3: Keystone refused the credentials that worked at the start (HTTP 401)", err.Error())
}
