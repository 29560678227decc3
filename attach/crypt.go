package attach

import (
	"context"
	"errors"
	"fmt"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/dmcrypt"
	"github.com/brick-storage/brick/keymanager"
	"github.com/brick-storage/brick/rollback"
	"github.com/brick-storage/brick/secret"
)

// Steps of encrypted volumes: crypt-key reads the encryption metadata and
// fetches the key before connect, so a refusal never touches the host;
// decrypt opens the device after connect (before Cinder's complete, mkfs
// and mount); crypt-close runs before the detach's disconnect.
const (
	StepCryptKey   = "crypt-key"
	StepDecrypt    = "decrypt"
	StepCryptClose = "crypt-close"
)

// Crypt is how a Manager opens encrypted volumes. A nil Manager.Crypt
// refuses them (unless AttachOptions.NoDecrypt).
type Crypt struct {
	// Keys is the cloud's key manager (Barbican); nil when there is none,
	// with KeysErr saying why.
	Keys    keymanager.Getter
	KeysErr error
	// Fixed is Cinder's fixed key (standalone Cinder); nil when no key file
	// is configured.
	Fixed keymanager.Getter
}

// CryptRecord is the dm-crypt mapping of an attached volume; no key.
type CryptRecord struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	Provider string `json:"provider"`
	// Formatted: this attach wrote the LUKS header (first attach).
	Formatted bool `json:"formatted,omitempty"`
}

// DevicePath is the device the user gets: the dm-crypt device of an
// encrypted volume, else the connector's device.
func (r *Record) DevicePath() string {
	switch {
	case r.Crypt != nil && r.Crypt.Path != "":
		return r.Crypt.Path
	case r.Device != nil:
		return r.Device.Path
	}
	return ""
}

// cryptName is the mapping's name: fixed by the volume, so a cleanup
// after a crash inside the decrypt step finds it without a record of it.
func cryptName(volumeID string) string { return "crypt-" + volumeID }

func (m *Manager) dm() *dmcrypt.Crypt {
	return &dmcrypt.Crypt{Run: m.Host.Runner, Blank: m.Host.Block}
}

// encryptionSource is the part of cinderapi.Client the decrypt step needs.
type encryptionSource interface {
	Encryption(ctx context.Context, volumeID string) (cinderapi.Encryption, error)
}

// ErrEncrypted refuses an encrypted volume brick cannot open.
var ErrEncrypted = errors.New("encrypted volume")

// cryptPlan is what decrypt opens a volume with: checked metadata and the
// key (a secret.Value: it never prints).
type cryptPlan struct {
	spec dmcrypt.Spec
	key  secret.Value
}

func (r *attachRun) cryptKeySteps() []rollback.Step {
	return []rollback.Step{{Name: StepCryptKey, Do: r.fetchCryptKey}}
}

func (r *attachRun) cryptSteps() []rollback.Step {
	return []rollback.Step{{Name: StepDecrypt, Do: r.decrypt, Undo: r.cryptClose, UndoName: StepCryptClose}}
}

// fetchCryptKey checks an encrypted volume's metadata and fetches its key
// before the connect: a volume brick cannot open is refused with no
// session, device or mapping made on this host.
func (r *attachRun) fetchCryptKey(ctx context.Context) error {
	enc, _, err := r.info.Bool("encrypted")
	if err != nil || !enc || r.opts.NoDecrypt {
		return err
	}
	id := r.rec.VolumeID
	src, ok := r.m.Cinder.(encryptionSource)
	if !ok {
		return fmt.Errorf("%w %s: this Cinder client cannot read encryption metadata", ErrEncrypted, id)
	}
	meta, err := src.Encryption(ctx, id)
	if err != nil {
		return fmt.Errorf("%w %s: read its encryption metadata: %w", ErrEncrypted, id, err)
	}
	spec, err := r.cryptSpec(meta)
	if err != nil || spec == nil {
		return err
	}
	key, err := r.m.cryptKey(ctx, meta.KeyID)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrEncrypted, id, err)
	}
	r.crypt = &cryptPlan{spec: *spec, key: key}
	return nil
}

// decrypt opens an encrypted volume's device with dm-crypt; later steps
// use the plaintext device.
func (r *attachRun) decrypt(ctx context.Context) error {
	enc, _, err := r.info.Bool("encrypted")
	if err != nil || !enc {
		return err
	}
	id := r.rec.VolumeID
	if r.opts.NoDecrypt {
		r.m.Host.Log.Warn("volume is encrypted: handing out the ciphertext device as asked (--no-decrypt); do not mkfs it",
			"volume", id, "device", r.dev.Path)
		return nil
	}
	if r.crypt == nil {
		return nil // back-end encryption: nothing to open here
	}
	// Named before the open: the undo closes what a failed open may have
	// left.
	r.rec.Crypt = &CryptRecord{Name: cryptName(id), Provider: string(r.crypt.spec.Provider)}
	dm := r.m.dm()
	dm.ForceFormat, dm.NeverFormat = r.opts.MkfsForce, r.reopen
	opened, err := dm.Open(ctx, r.dev.Path, r.rec.Crypt.Name, r.crypt.spec, r.crypt.key, r.rec.Mode == "ro")
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrEncrypted, id, err)
	}
	r.rec.Crypt.Path, r.rec.Crypt.Formatted = opened.Path, opened.Formatted
	return nil
}

// cryptSpec checks Cinder's metadata; nil (no error) means the host has
// nothing to decrypt (back-end encryption).
func (r *attachRun) cryptSpec(meta cinderapi.Encryption) (*dmcrypt.Spec, error) {
	id := r.rec.VolumeID
	if meta.KeyID == "" {
		return nil, fmt.Errorf("%w %s: Cinder says it is encrypted but its encryption metadata has no key ID: "+
			"check the volume type's encryption (openstack volume type show --encryption-type)", ErrEncrypted, id)
	}
	if !meta.FrontEnd() {
		return nil, nil
	}
	p, err := dmcrypt.ParseProvider(meta.Provider)
	if errors.Is(err, dmcrypt.ErrNotEncrypted) {
		return nil, fmt.Errorf("%w %s: its encryption metadata names no provider: "+
			"set one on the volume type (luks or luks2)", ErrEncrypted, id)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrEncrypted, id, err)
	}
	spec := dmcrypt.Spec{Provider: p, Cipher: meta.Cipher, KeySize: meta.KeySize}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w %s: encryption metadata: %w", ErrEncrypted, id, err)
	}
	return &spec, nil
}

// cryptKey fetches the key: Cinder's fixed key for the all-zero ID when a
// key file is set, else the key manager.
func (m *Manager) cryptKey(ctx context.Context, keyID string) (secret.Value, error) {
	c := m.Crypt
	switch {
	case c == nil:
		return secret.Value{}, errors.New("brick has no key access configured: authenticate with Keystone " +
			"(the key comes from Barbican), set a fixed key file for a standalone Cinder, or use --no-decrypt for the ciphertext")
	case keyID == keymanager.FixedKeyID && c.Fixed != nil:
		return asSecret(c.Fixed.Key(ctx, keyID))
	case c.Keys != nil:
		key, err := asSecret(c.Keys.Key(ctx, keyID))
		if errors.Is(err, apierr.ErrUnreachable) {
			err = fmt.Errorf("%w: check that the key manager runs and that this host reaches its catalog endpoint, "+
				"or use --no-decrypt for the ciphertext", err)
		}
		return key, err
	case keyID == keymanager.FixedKeyID:
		return secret.Value{}, errors.New("its key is Cinder's fixed key: set brick's fixed key file (the same hex as Cinder's [key_manager] fixed_key, mode 0600)")
	case c.KeysErr != nil:
		return secret.Value{}, c.KeysErr
	}
	return secret.Value{}, keymanager.Unreachable("no key manager configured")
}

// asSecret holds a fetched key as a secret.Value and wipes the bytes.
func asSecret(key []byte, err error) (secret.Value, error) {
	defer clear(key)
	if err != nil {
		return secret.Value{}, err
	}
	return secret.New(string(key)), nil
}

func (r *attachRun) cryptClose(ctx context.Context) error {
	if r.rec.Crypt == nil {
		return nil
	}
	return r.m.dm().Close(ctx, r.rec.Crypt.Name)
}

// devicePath is the device later attach steps use.
func (r *attachRun) devicePath() string {
	if p := r.rec.DevicePath(); p != "" {
		return p
	}
	return r.dev.Path
}

// freshPlaintext: this attach wrote the LUKS header, so the plaintext
// device holds nothing yet, though it reads as noise (zeros decrypted),
// which mkfs's blank check would take for data.
func (r *attachRun) freshPlaintext() bool {
	return r.rec.Crypt != nil && r.rec.Crypt.Formatted
}

// cryptSteps of a detach: close the mapping before the disconnect. A
// record rebuilt from Cinder has no crypt record: an encrypted volume's
// mapping is closed by its name then (closing one that is not open is
// success, as after --no-decrypt).
func (d *detachRun) cryptSteps() []rollback.Step {
	name := ""
	if d.rec.Crypt != nil {
		name = d.rec.Crypt.Name
	} else if enc, _, _ := d.info.Bool("encrypted"); enc {
		name = cryptName(d.rec.VolumeID)
	}
	if name == "" {
		return nil
	}
	return []rollback.Step{{Name: StepCryptClose, Do: func(ctx context.Context) error {
		return d.m.dm().Close(ctx, name)
	}}}
}

// pushCryptClose adds the close to a cleanup's undo of an attach that
// opened a mapping, or died inside the decrypt step of an encrypted volume
// (the name is the volume's, recorded or not).
func (m *Manager) pushCryptClose(j *rollback.Journal, rec *Record) {
	inside := rec.Step == StepDecrypt && rec.ConnectionInfo != nil
	if inside {
		enc, _, _ := rec.ConnectionInfo.Bool("encrypted")
		inside = enc
	}
	if rec.Crypt == nil && !inside {
		return
	}
	j.Push(StepCryptClose, func(ctx context.Context) error { return m.dm().Close(ctx, cryptName(rec.VolumeID)) })
}
