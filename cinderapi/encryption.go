package cinderapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ident"
)

// Encryption is a volume's encryption metadata (GET
// /volumes/{id}/encryption): the volume type's encryption spec and the
// volume's key ID. Fields are as Cinder sent them; the dm-crypt layer
// validates provider, cipher and key size before using them.
type Encryption struct {
	// KeyID is the key manager's ID of the volume's key; "" when the volume
	// has none (not encrypted).
	KeyID string
	// ControlLocation is "front-end" (the host decrypts) or "back-end"
	// (the storage does); "" means front-end, Cinder's default.
	ControlLocation string
	Provider        string
	Cipher          string
	// KeySize is in bits; 0 when Cinder gave none.
	KeySize int
}

// FrontEnd reports whether this host must decrypt the volume.
func (e Encryption) FrontEnd() bool {
	return e.KeyID != "" && e.ControlLocation != "back-end"
}

type encryptionBody struct {
	KeyID           *string      `json:"encryption_key_id"`
	ControlLocation *string      `json:"control_location"`
	Provider        *string      `json:"provider"`
	Cipher          *string      `json:"cipher"`
	KeySize         *json.Number `json:"key_size"`
}

// ParseEncryption reads Cinder's encryption metadata body. It refuses what
// no Cinder sends (non-object, a key size that is not a small whole number,
// control characters) rather than guessing.
func ParseEncryption(body []byte) (Encryption, error) {
	var b encryptionBody
	if err := json.Unmarshal(body, &b); err != nil {
		return Encryption{}, fmt.Errorf("encryption metadata: %w", err)
	}
	var e Encryption
	for _, f := range []struct {
		name string
		in   *string
		out  *string
	}{
		{"encryption_key_id", b.KeyID, &e.KeyID},
		{"control_location", b.ControlLocation, &e.ControlLocation},
		{"provider", b.Provider, &e.Provider},
		{"cipher", b.Cipher, &e.Cipher},
	} {
		if f.in == nil {
			continue
		}
		if len(*f.in) > 255 || strings.ContainsFunc(*f.in, ident.IsControl) {
			return Encryption{}, fmt.Errorf("encryption metadata: %s: longer than 255 bytes or control characters", f.name)
		}
		*f.out = *f.in
	}
	switch e.ControlLocation {
	case "", "front-end", "back-end":
	default:
		return Encryption{}, fmt.Errorf("encryption metadata: control_location %s: want front-end or back-end", strconv.Quote(e.ControlLocation))
	}
	if b.KeySize != nil && *b.KeySize != "" {
		n, err := strconv.Atoi(string(*b.KeySize))
		if err != nil || n < 0 || n > 65536 {
			return Encryption{}, fmt.Errorf("encryption metadata: key_size %.20q: want a number of bits", string(*b.KeySize))
		}
		e.KeySize = n
	}
	return e, nil
}

// Encryption fetches a volume's encryption metadata.
func (c *Client) Encryption(ctx context.Context, volumeID string) (Encryption, error) {
	var raw json.RawMessage
	_, err := c.SC.Get(ctx, c.SC.ServiceURL("volumes", volumeID, "encryption"), &raw, &gophercloud.RequestOpts{OkCodes: []int{200}})
	if err != nil {
		return Encryption{}, mapError("get encryption metadata", volumeID, err)
	}
	e, err := ParseEncryption(raw)
	if err != nil {
		return Encryption{}, &apierr.Error{Service: Service, Op: "get encryption metadata", Volume: volumeID, Kind: apierr.ErrUnexpected, Message: err.Error(), Err: err}
	}
	return e, nil
}
