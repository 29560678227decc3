package keymanager

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io/fs"
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
	Lstat(hostPath string) (fs.FileInfo, error)
	ReadFile(hostPath string) ([]byte, error)
}

// LoadFixed reads a fixed key file: a regular file (not a symlink) that
// only its owner can read or write, holding the key as hex on one line.
func LoadFixed(files FileReader, path string) (*Fixed, error) {
	fi, err := files.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("fixed key file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("fixed key file %s: not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("fixed key file %s: mode %04o lets others read it: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if fi.Size() > 2*MaxKeySize+2 {
		return nil, fmt.Errorf("fixed key file %s: %d bytes is too big for a key", path, fi.Size())
	}
	raw, err := files.ReadFile(path)
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
		return nil, fmt.Errorf("%w: key %s is not Cinder's fixed key (%s): this Cinder uses a key manager; "+
			"authenticate with Keystone instead of a fixed key file", ErrBadKey, keyID, FixedKeyID)
	}
	return bytes.Clone(f.key), nil
}
