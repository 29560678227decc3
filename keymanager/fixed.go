package keymanager

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/brick-storage/brick/apierr"
)

// FixedKeyID is the key ID Cinder's fixed-key manager gives every volume.
const FixedKeyID = "00000000-0000-0000-0000-000000000000"

// Fixed is Cinder's fixed-key manager: one key for every volume, the same
// hex string as Cinder's [key_manager] fixed_key.
type Fixed struct {
	key []byte
}

// FileReader is what LoadFixed needs of host.FS.
type FileReader interface {
	ReadChecked(hostPath string, noFollow bool, max int64, check func(fs.FileInfo) error) ([]byte, error)
}

// LoadFixed reads a fixed key file: a regular file (not a symlink) that
// only its owner can read or write and that trusted accepts (as root:
// root's own), holding the key as hex on one line. The file is judged and
// read through one descriptor.
func LoadFixed(files FileReader, path string, trusted func(path string, fi fs.FileInfo) error) (*Fixed, error) {
	raw, err := files.ReadChecked(path, true, 2*MaxKeySize+2, func(fi fs.FileInfo) error {
		switch {
		case !fi.Mode().IsRegular():
			return errors.New("not a regular file")
		case fi.Mode().Perm()&0o077 != 0:
			return fmt.Errorf("mode %04o lets others read it: chmod 600 %s", fi.Mode().Perm(), path)
		}
		return trusted(path, fi)
	})
	if errors.Is(err, syscall.ELOOP) {
		err = errors.New("not a regular file (a symlink)")
	}
	if err != nil {
		return nil, fmt.Errorf("fixed key file %s: %w", path, err)
	}
	defer clear(raw)
	text := bytes.TrimSpace(raw)
	key := make([]byte, hex.DecodedLen(len(text)))
	if _, err := hex.Decode(key, text); err != nil || len(key) == 0 {
		// hex's error quotes the offending byte: a piece of the key.
		clear(key)
		return nil, fmt.Errorf("fixed key file %s: want the key as hex digits on one line, as Cinder's [key_manager] fixed_key", path)
	}
	return &Fixed{key: key}, nil
}

// Key returns the fixed key for Cinder's all-zero key ID; any other ID
// belongs to a real key manager.
func (f *Fixed) Key(_ context.Context, keyID string) ([]byte, error) {
	if keyID != FixedKeyID {
		return nil, failure(apierr.ErrInvalid, nil, "key %s is not Cinder's fixed key (%s): this Cinder uses a key manager; "+
			"authenticate with Keystone instead of a fixed key file", keyID, FixedKeyID)
	}
	return bytes.Clone(f.key), nil
}
