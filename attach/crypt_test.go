package attach

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/keymanager"
)

// encCinder adds encryption metadata to the fake Cinder's client.
type encCinder struct {
	*cinderapi.Client
	enc cinderapi.Encryption
	err error
}

func (e encCinder) Encryption(context.Context, string) (cinderapi.Encryption, error) {
	return e.enc, e.err
}

type fakeKeys struct {
	key []byte
	err error
}

func (k fakeKeys) Key(context.Context, string) ([]byte, error) {
	return append([]byte(nil), k.key...), k.err
}

const (
	cryptKeyID = "5a8c2c1e-2d5b-4f7e-9a51-1f0f6f0b9d11"
	cryptPass  = "a1b2c3d4e5f60718"
)

var cryptKey = []byte{0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18}

// cryptFixture is the attach fixture with an encrypted volume and a
// scripted cryptsetup over one disk.
type cryptFixture struct {
	*fixture
	luks, open bool
	pass       string
}

func newCryptFixture(t *testing.T) *cryptFixture {
	c := &cryptFixture{fixture: newFixture(t, "")}
	c.fake.ConnectionInfo = func(id string, conn map[string]any) map[string]any {
		ci := cindertest.DefaultConnectionInfo(id, conn)
		ci["encrypted"] = true
		return ci
	}
	c.runner = hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "cryptsetup" {
			return c.cryptsetup(cmd)
		}
		return c.fixture.run(ctx, cmd)
	})
	c.host = hosttest.NewAt(t, c.root, c.runner)
	return c
}

func (c *cryptFixture) cryptsetup(cmd host.Command) (host.Result, error) {
	switch op := hosttest.Arg(c.t, cmd, 0); {
	case op == "luksOpen":
		if !c.luks {
			return host.Result{}, hosttest.Fail(cmd, 1, "not a valid LUKS device")
		}
		if string(cmd.Stdin) != c.pass {
			return host.Result{}, hosttest.Fail(cmd, 2, "No key available with this passphrase.")
		}
		c.open = true
	case op == "isLuks" && !c.luks:
		return host.Result{}, hosttest.Fail(cmd, 1, "")
	case hosttest.Arg(c.t, cmd, 1) == "luksFormat":
		c.luks, c.pass = true, string(cmd.Stdin)
	case op == "close":
		c.open = false
	}
	return host.Result{}, nil
}

func (c *cryptFixture) manager(enc cinderapi.Encryption, encErr error, cr *Crypt) *Manager {
	m := c.fixture.manager()
	m.Host = c.host
	m.Cinder = encCinder{Client: m.Cinder.(*cinderapi.Client), enc: enc, err: encErr}
	m.Crypt = cr
	return m
}

var luks2Meta = cinderapi.Encryption{KeyID: cryptKeyID, ControlLocation: "front-end", Provider: "luks2", Cipher: "aes-xts-plain64", KeySize: 256}

func TestEncryptedAttachDetach(t *testing.T) {
	c := newCryptFixture(t)
	m := c.manager(luks2Meta, nil, &Crypt{Keys: fakeKeys{key: cryptKey}})
	mp := "/mnt/secret"
	rec, err := m.Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: mp, Mkfs: "ext4"})
	require.NoError(t, err)
	name := "crypt-" + volID
	require.Equal(t, &CryptRecord{Name: name, Path: "/dev/mapper/" + name, Provider: "luks2", Formatted: true}, rec.Crypt)
	require.Equal(t, "/dev/mapper/"+name, rec.DevicePath())
	require.Equal(t, "/dev/sdx", rec.Device.Path, "the ciphertext device stays for the disconnect")
	require.Equal(t, "/dev/mapper/"+name, c.mounts[mp])
	require.True(t, c.open)
	calls := strings.Join(c.runner.Calls(), "\n")
	require.Contains(t, calls, "cryptsetup --batch-mode luksFormat --type luks2 --key-file=- --cipher aes-xts-plain64 --key-size 256 /dev/sdx")
	require.Contains(t, calls, "mkfs.ext4")
	require.NotContains(t, calls, "mkfs.ext4 /dev/sdx")
	require.NotContains(t, calls, cryptPass)
	data, err := os.ReadFile(filepath.Join(c.root, DefaultStateDir, volID+".json"))
	require.NoError(t, err)
	require.NotContains(t, string(data), cryptPass)
	require.Contains(t, string(data), `"crypt"`)

	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID}))
	require.False(t, c.open)
	c.requireClean()
	calls = strings.Join(c.runner.Calls(), "\n")
	require.Less(t, strings.Index(calls, "umount"), strings.Index(calls, "cryptsetup close "+name))

	// The second attach opens what the first formatted.
	rec, err = m.Attach(context.Background(), AttachOptions{Volume: "data"})
	require.NoError(t, err)
	require.False(t, rec.Crypt.Formatted)
	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID}))
	c.requireClean()
}

func TestEncryptedAttachRefusals(t *testing.T) {
	forbidden := fmt.Errorf("%w %s (HTTP 403): the user needs a role that may read secret payloads", apierr.ErrForbidden, cryptKeyID)
	for _, tc := range []struct {
		name   string
		enc    cinderapi.Encryption
		encErr error
		crypt  *Crypt
		luks   bool
		want   string
	}{
		{"no key access", luks2Meta, nil, &Crypt{Keys: fakeKeys{err: forbidden}}, false, "HTTP 403"},
		{"nothing configured", luks2Meta, nil, nil, false, "no key access configured"},
		{"key manager unreachable", luks2Meta, nil, &Crypt{KeysErr: keymanager.Unreachable("no key-manager endpoint")}, false, "cannot reach the key manager"},
		{"key manager down", luks2Meta, nil, &Crypt{Keys: fakeKeys{err: keymanager.Unreachable("key " + cryptKeyID + ": dial tcp: connection refused")}},
			false, "connection refused: check that the key manager runs"},
		{"fixed key not set", cinderapi.Encryption{KeyID: keymanager.FixedKeyID, Provider: "luks"}, nil, &Crypt{}, false, "fixed key file"},
		{"plain", cinderapi.Encryption{KeyID: cryptKeyID, Provider: "plain"}, nil, &Crypt{Keys: fakeKeys{key: cryptKey}}, false, "retype the volume to luks or luks2"},
		{"unknown provider", cinderapi.Encryption{KeyID: cryptKeyID, Provider: "luks9"}, nil, &Crypt{Keys: fakeKeys{key: cryptKey}}, false, `unsupported encryption provider "luks9"`},
		{"no key id", cinderapi.Encryption{Provider: "luks"}, nil, &Crypt{Keys: fakeKeys{key: cryptKey}}, false, "has no key ID"},
		{"no provider", cinderapi.Encryption{KeyID: cryptKeyID}, nil, &Crypt{Keys: fakeKeys{key: cryptKey}}, false, "names no provider"},
		{"metadata unreadable", luks2Meta, errors.New("HTTP 500"), &Crypt{Keys: fakeKeys{key: cryptKey}}, false, "read its encryption metadata"},
		{"wrong key", luks2Meta, nil, &Crypt{Keys: fakeKeys{key: []byte{1}}}, true, "does not open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCryptFixture(t)
			c.luks, c.pass = tc.luks, cryptPass
			_, err := c.manager(tc.enc, tc.encErr, tc.crypt).Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: "/mnt/x", Mkfs: "ext4"})
			require.ErrorIs(t, err, ErrEncrypted)
			require.ErrorContains(t, err, tc.want)
			step := StepCryptKey // refused before the connect
			if tc.luks {
				step = StepDecrypt // the key does not open the header
			}
			require.ErrorContains(t, err, "local-attach data: "+step+": encrypted volume "+volID)
			if step == StepCryptKey {
				require.Empty(t, c.runner.Calls(), "refused before any command ran on the host")
			}
			require.NotContains(t, err.Error(), "\n")
			require.NotContains(t, err.Error(), cryptPass)
			require.False(t, c.open)
			require.NotContains(t, strings.Join(c.runner.Calls(), "\n"), "mkfs")
			c.requireClean()
		})
	}
}

// TestEncryptedRecordNeverShowsTheKey: the record of an encrypted attach,
// as returned, printed, marshalled and saved, holds neither the key nor
// the passphrase.
func TestEncryptedRecordNeverShowsTheKey(t *testing.T) {
	c := newCryptFixture(t)
	m := c.manager(luks2Meta, nil, &Crypt{Keys: fakeKeys{key: cryptKey}})
	rec, err := m.Attach(context.Background(), AttachOptions{Volume: "data"})
	require.NoError(t, err)
	js, err := json.Marshal(rec)
	require.NoError(t, err)
	saved, err := os.ReadFile(filepath.Join(c.root, DefaultStateDir, volID+".json"))
	require.NoError(t, err)
	out := []string{string(js), string(saved), fmt.Sprintf("%v %+v %#v", rec, rec, rec), fmt.Sprintf("%+v", *rec.Crypt)}
	for _, o := range out {
		require.NotContains(t, strings.ToLower(o), cryptPass)
		require.NotContains(t, o, string(cryptKey))
		require.NotContains(t, o, base64.StdEncoding.EncodeToString(cryptKey))
	}
	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID}))
	c.requireClean()
}

func TestEncryptedAttachWithoutDecrypt(t *testing.T) {
	for _, tc := range []struct {
		name string
		enc  cinderapi.Encryption
		opts AttachOptions
	}{
		{"--no-decrypt", luks2Meta, AttachOptions{Volume: "data", NoDecrypt: true}},
		{"back-end encryption", cinderapi.Encryption{KeyID: cryptKeyID, ControlLocation: "back-end", Provider: "luks"}, AttachOptions{Volume: "data"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCryptFixture(t)
			m := c.manager(tc.enc, nil, &Crypt{Keys: fakeKeys{key: cryptKey}})
			rec, err := m.Attach(context.Background(), tc.opts)
			require.NoError(t, err)
			require.Nil(t, rec.Crypt)
			require.Equal(t, "/dev/sdx", rec.DevicePath())
			require.NotContains(t, strings.Join(c.runner.Calls(), "\n"), "cryptsetup")
			require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID}))
			c.requireClean()
		})
	}
}

func TestEncryptedDetachWithoutRecord(t *testing.T) {
	c := newCryptFixture(t)
	m := c.manager(luks2Meta, nil, &Crypt{Keys: fakeKeys{key: cryptKey}})
	_, err := m.Attach(context.Background(), AttachOptions{Volume: "data"})
	require.NoError(t, err)
	require.NoError(t, m.store().remove(volID))
	// The fake SCSI device has no WWID to check: --force, as a user would.
	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID, Force: true}))
	require.False(t, c.open, "the mapping is closed by its name")
	c.requireClean()
}

func TestEncryptedCrashInsideDecryptThenCleanup(t *testing.T) {
	c := newCryptFixture(t)
	m := c.manager(luks2Meta, nil, &Crypt{Keys: fakeKeys{key: cryptKey}})
	// A record left by a brick killed inside the decrypt step: no crypt
	// record yet, but the mapping may exist.
	rec, err := m.Attach(context.Background(), AttachOptions{Volume: "data"})
	require.NoError(t, err)
	rec.Phase, rec.Step, rec.Crypt = PhaseAttaching, StepDecrypt, nil
	require.NoError(t, m.store().save(rec))
	res, err := m.Cleanup(context.Background(), volID, false)
	require.NoError(t, err)
	require.Equal(t, "undone", res[0].Action)
	require.False(t, c.open)
	require.Contains(t, strings.Join(c.runner.Calls(), "\n"), "cryptsetup close crypt-"+volID)
	c.requireClean()
}

// TestEncryptedAttachKeepsData: an encrypted volume whose device holds
// data blkid does not recognise (raw data, plain dm-crypt) gets no LUKS
// header; the error names the volume and the fix, and --mkfs-force
// formats it.
func TestEncryptedAttachKeepsData(t *testing.T) {
	c := newCryptFixture(t)
	dev := filepath.Join(c.root, "dev", "sdx")
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("precious"), 8192)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	m := c.manager(luks2Meta, nil, &Crypt{Keys: fakeKeys{key: cryptKey}})

	_, err = m.Attach(context.Background(), AttachOptions{Volume: "data"})
	require.ErrorIs(t, err, ErrEncrypted)
	require.ErrorContains(t, err, volID)
	require.ErrorContains(t, err, "(a non-zero byte at offset 8192, in its first MiB): refusing to overwrite it with a LUKS header; if the volume is new, pass --mkfs-force")
	require.NotContains(t, strings.Join(c.runner.Calls(), "\n"), "luksFormat")
	require.False(t, c.luks)
	c.requireClean()

	rec, err := m.Attach(context.Background(), AttachOptions{Volume: "data", MkfsForce: true})
	require.NoError(t, err)
	require.True(t, rec.Crypt.Formatted)
	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID}))
	c.requireClean()
}

// TestEncryptedPersistRestore is a shutdown and a boot of an encrypted
// --persist volume: the reconnect fetches the key and opens the mapping
// again before mounting it, with the attach's --mount-fstype and
// --mount-suid-dev, and never formats at that point.
func TestEncryptedPersistRestore(t *testing.T) {
	c := newCryptFixture(t)
	m := c.manager(luks2Meta, nil, &Crypt{Keys: fakeKeys{key: cryptKey}})
	ctx := context.Background()
	mp := "/mnt/secret"
	_, err := m.Attach(ctx, AttachOptions{Volume: "data", Persist: true, Mountpoint: mp, Mkfs: "ext4", MountFSType: "ext3", MountSuidDev: true})
	require.NoError(t, err)
	require.NoError(t, m.Suspend(ctx, volID, SuspendOptions{Unmount: true}))
	require.False(t, c.open)
	before := len(c.runner.Calls())

	rec, err := m.Reconnect(ctx, volID)
	require.NoError(t, err)
	name := "crypt-" + volID
	require.True(t, c.open, "the mapping is open again")
	require.Equal(t, "/dev/mapper/"+name, c.mounts[mp])
	require.True(t, rec.Crypt.Formatted, "still the attach's format")
	calls := c.runner.Calls()[before:]
	require.Contains(t, calls, "cryptsetup luksOpen --key-file=- /dev/sdx "+name)
	require.Contains(t, calls, "mount -t ext3 -- /dev/mapper/"+name+" "+mp)
	require.NotContains(t, strings.Join(calls, "\n"), "luksFormat")
	require.NoError(t, m.Detach(ctx, DetachOptions{Volume: volID}))
	c.requireClean()

	// A volume that lost its header is not formatted at restore.
	_, err = m.Attach(ctx, AttachOptions{Volume: "data", Persist: true})
	require.NoError(t, err)
	require.NoError(t, m.Suspend(ctx, volID, SuspendOptions{Unmount: true}))
	c.luks = false
	_, err = m.Reconnect(ctx, volID)
	require.ErrorContains(t, err, "no LUKS header")
	require.False(t, c.luks, "not formatted")
}
