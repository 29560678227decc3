package dmcrypt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/secret"
)

func TestPassphraseIsLowercaseHexOfEveryByte(t *testing.T) {
	// Leading zero nibbles stay: os-brick's old passphrase dropped them
	// (its bug 1633518), the current one does not.
	require.Equal(t, "000f10ff", Passphrase(secret.New("\x00\x0f\x10\xff")).Reveal())
	require.True(t, Passphrase(secret.Value{}).IsZero())
}

// TestKeysNeverPrint: a key or passphrase inside whatever a caller might
// log or render shows as the mask, whatever the verb or encoder.
func TestKeysNeverPrint(t *testing.T) {
	raw := string([]byte{0xde, 0xad, 0x00, 0xbe, 0xef, 0x01})
	k := secret.New(raw)
	held := struct {
		Spec       Spec
		Key, Pass  secret.Value
		Opened     Opened
		KeyPointer *secret.Value
	}{Spec{Provider: LUKS2}, k, Passphrase(k), Opened{Path: "/dev/mapper/v"}, &k}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out = append(out, fmt.Sprintf(verb, held), fmt.Sprintf(verb, held.Key), fmt.Sprintf(verb, held.Pass))
	}
	js, err := json.Marshal(held)
	require.NoError(t, err)
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("open", "key", held.Key, "pass", held.Pass, "held", held)
	out = append(out, string(js), logged.String())
	for _, o := range out {
		require.NotContains(t, o, pass)
		require.NotContains(t, strings.ToLower(o), pass, "hex of the key")
		require.NotContains(t, o, raw)
		require.NotContains(t, o, base64.StdEncoding.EncodeToString([]byte(raw)))
	}
	require.Contains(t, string(js), secret.Mask)
}

func TestParseProvider(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Provider
		err  error
	}{
		{"luks", LUKS, nil},
		{"LuksEncryptor", LUKS, nil},
		{"nova.volume.encryptors.luks.LuksEncryptor", LUKS, nil},
		{"os_brick.encryptors.luks.LuksEncryptor", LUKS, nil},
		{"luks2", LUKS2, nil},
		{"os_brick.encryptors.luks.Luks2Encryptor", LUKS2, nil},
		{"plain", "", ErrUnsupported},
		{"CryptsetupEncryptor", "", ErrUnsupported},
		{"", "", ErrNotEncrypted},
		{"NoOpEncryptor", "", ErrNotEncrypted},
		{"LUKS", "", ErrUnsupported},
		{"luks3\n", "", ErrUnsupported},
	} {
		got, err := ParseProvider(tc.in)
		if tc.err != nil {
			require.ErrorIs(t, err, tc.err, tc.in)
			require.NotContains(t, err.Error(), "\n")
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got)
	}
	_, err := ParseProvider("plain")
	require.ErrorContains(t, err, "retype the volume to luks or luks2")
}

func TestSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		ok   bool
	}{
		{Spec{Provider: LUKS}, true},
		{Spec{Provider: LUKS2, Cipher: "aes-xts-plain64", KeySize: 512}, true},
		{Spec{Provider: LUKS, Cipher: "aes-cbc-essiv:sha256", KeySize: 256}, true},
		{Spec{Provider: "plain"}, false},
		{Spec{Provider: LUKS, Cipher: "--key-file=/etc/shadow"}, false},
		{Spec{Provider: LUKS, Cipher: "aes xts"}, false},
		{Spec{Provider: LUKS, KeySize: 255}, false},
		{Spec{Provider: LUKS, KeySize: -8}, false},
		{Spec{Provider: LUKS, KeySize: 8192}, false},
	} {
		err := tc.spec.Validate()
		if tc.ok {
			require.NoError(t, err, "%+v", tc.spec)
		} else {
			require.Error(t, err, "%+v", tc.spec)
		}
	}
}

// disk scripts cryptsetup and blkid over one fake device.
type disk struct {
	t       testing.TB
	luks    bool   // has a LUKS header
	pass    string // its passphrase
	sig     string // another signature blkid finds
	open    bool
	failFmt bool
	data    bool // data no signature marks (raw, plain dm-crypt)
}

func (d *disk) CheckZeroEnds(dev string) error {
	if d.data {
		return fmt.Errorf("%w (a non-zero byte at offset 512, in its first MiB)", host.ErrNotZero)
	}
	return nil
}

func (d *disk) run(_ context.Context, cmd host.Command) (host.Result, error) {
	switch {
	case cmd.Name == "blkid":
		if d.luks {
			return host.Result{Stdout: []byte("crypto_LUKS\n")}, nil
		}
		if d.sig != "" {
			return host.Result{Stdout: []byte(d.sig + "\n")}, nil
		}
		return host.Result{ExitCode: 2}, nil
	case cmd.Name != "cryptsetup":
		return host.Result{}, hosttest.Fail(cmd, 127, "unexpected")
	}
	switch op := hosttest.Arg(d.t, cmd, 0); {
	case op == "luksOpen":
		if !d.luks {
			return host.Result{}, hosttest.Fail(cmd, 1, "Device /dev/sdx is not a valid LUKS device.")
		}
		if string(cmd.Stdin) != d.pass {
			return host.Result{}, hosttest.Fail(cmd, 2, "No key available with this passphrase.")
		}
		d.open = true
		return host.Result{}, nil
	case op == "isLuks":
		if d.luks {
			return host.Result{}, nil
		}
		return host.Result{}, hosttest.Fail(cmd, 1, "")
	case hosttest.Arg(d.t, cmd, 1) == "luksFormat":
		if d.failFmt {
			return host.Result{}, hosttest.Fail(cmd, 5, "Cannot format device /dev/sdx in use.")
		}
		d.luks, d.pass = true, string(cmd.Stdin)
		return host.Result{}, nil
	case op == "close":
		if !d.open {
			return host.Result{ExitCode: 4}, nil
		}
		d.open = false
		return host.Result{}, nil
	case op == "status":
		if d.open {
			return host.Result{}, nil
		}
		return host.Result{ExitCode: 4}, nil
	}
	return host.Result{}, hosttest.Fail(cmd, 1, "unexpected")
}

var key = secret.New(string([]byte{0xde, 0xad, 0x00, 0xbe, 0xef, 0x01}))

const pass = "dead00beef01"

// formatCalls are the commands of a first open that formats.
var formatCalls = []string{
	"cryptsetup luksOpen --key-file=- /dev/sdx crypt-v",
	"cryptsetup isLuks /dev/sdx",
	"blkid -p -o value -s TYPE /dev/sdx",
	"cryptsetup --batch-mode luksFormat --type luks2 --key-file=- --cipher aes-xts-plain64 --key-size 512 /dev/sdx",
	"cryptsetup luksOpen --key-file=- /dev/sdx crypt-v",
}

func TestOpen(t *testing.T) {
	spec := Spec{Provider: LUKS2, Cipher: "aes-xts-plain64", KeySize: 512}
	for _, tc := range []struct {
		name      string
		disk      disk
		key       secret.Value
		ro        bool
		force     bool
		formatted bool
		err       string
		is        error
		calls     []string
	}{
		{name: "opens a LUKS volume", disk: disk{luks: true, pass: pass}, key: key,
			calls: []string{"cryptsetup luksOpen --key-file=- /dev/sdx crypt-v"}},
		{name: "read-only", disk: disk{luks: true, pass: pass}, key: key, ro: true,
			calls: []string{"cryptsetup luksOpen --key-file=- --readonly /dev/sdx crypt-v"}},
		{name: "formats a blank volume first", disk: disk{}, key: key, formatted: true,
			calls: formatCalls},
		{name: "wrong key", disk: disk{luks: true, pass: "other"}, key: key, is: ErrWrongKey},
		{name: "never formats a filesystem", disk: disk{sig: "ext4"}, key: key, is: ErrNotBlank, err: "blkid: ext4"},
		{name: "never formats data blkid does not see", disk: disk{data: true}, key: key, is: ErrNotBlank,
			err: "format /dev/sdx: not LUKS formatted but not blank either: blkid finds no signature, but the device is not blank (a non-zero byte at offset 512, in its first MiB): refusing to overwrite it with a LUKS header; if the volume is new, pass --mkfs-force to format it anyway"},
		{name: "formats data when forced", disk: disk{data: true}, key: key, force: true, formatted: true,
			calls: formatCalls},
		{name: "never formats read-only", disk: disk{}, key: key, ro: true, err: "attach it read-write once"},
		{name: "format fails", disk: disk{failFmt: true}, key: key, err: "format /dev/sdx"},
		{name: "empty key", disk: disk{}, key: secret.Value{}, err: "empty key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.disk
			d.t = t
			r := hosttest.NewRunner(d.run)
			c := &Crypt{Run: r, Blank: &d, ForceFormat: tc.force}
			got, err := c.Open(context.Background(), "/dev/sdx", "crypt-v", spec, tc.key, tc.ro)
			for _, cmd := range r.Commands() {
				require.NotContains(t, strings.Join(cmd.Argv(), " "), pass, "passphrase on argv")
				if len(cmd.Stdin) > 0 {
					require.Equal(t, []string{pass}, cmd.Secrets)
				}
			}
			if tc.err != "" || tc.is != nil {
				require.Error(t, err)
				if tc.is != nil {
					require.ErrorIs(t, err, tc.is)
				}
				require.ErrorContains(t, err, tc.err)
				require.NotContains(t, err.Error(), pass)
				return
			}
			require.NoError(t, err)
			require.Equal(t, Opened{Path: "/dev/mapper/crypt-v", Formatted: tc.formatted}, got)
			require.Equal(t, tc.calls, r.Calls())
			require.Equal(t, pass, d.pass)
		})
	}
}

// TestFormatKDF: a key of 128 bits or more gets cryptsetup's least PBKDF2
// cost on both LUKS versions; a shorter one keeps cryptsetup's default.
func TestFormatKDF(t *testing.T) {
	const fast = "--pbkdf pbkdf2 --pbkdf-force-iterations 1000 "
	for _, tc := range []struct {
		provider Provider
		keyLen   int
		want     string
	}{
		{LUKS, 32, "--type luks1 --key-file=- " + fast},
		{LUKS2, 32, "--type luks2 --key-file=- " + fast},
		{LUKS, 16, "--type luks1 --key-file=- " + fast},
		{LUKS2, 16, "--type luks2 --key-file=- " + fast},
		{LUKS, 15, "--type luks1 --key-file=- "},
		{LUKS2, 15, "--type luks2 --key-file=- "},
	} {
		t.Run(fmt.Sprintf("%s %d bytes", tc.provider, tc.keyLen), func(t *testing.T) {
			d := disk{t: t}
			r := hosttest.NewRunner(d.run)
			c := &Crypt{Run: r, Blank: &d}
			k := secret.New(strings.Repeat("\xa5", tc.keyLen))
			got, err := c.Open(context.Background(), "/dev/sdx", "crypt-v", Spec{Provider: tc.provider}, k, false)
			require.NoError(t, err)
			require.True(t, got.Formatted)
			require.Contains(t, r.Calls(), "cryptsetup --batch-mode luksFormat "+tc.want+"/dev/sdx")
			require.Equal(t, Passphrase(k).Reveal(), d.pass)
		})
	}
}

func TestOpenRefusesBadInput(t *testing.T) {
	c := &Crypt{Run: hosttest.NewRunner(nil)}
	ctx := context.Background()
	_, err := c.Open(ctx, "/dev/sdx", "../x", Spec{Provider: LUKS}, key, false)
	require.ErrorContains(t, err, "dm-crypt name")
	_, err = c.Open(ctx, "/etc/passwd", "v", Spec{Provider: LUKS}, key, false)
	require.ErrorContains(t, err, "not under /dev")
	_, err = c.Open(ctx, "/dev/sdx", "v", Spec{Provider: "plain"}, key, false)
	require.ErrorIs(t, err, ErrUnsupported)
}

func TestCloseAndStatus(t *testing.T) {
	d := &disk{t: t, luks: true, pass: pass, open: true}
	c := &Crypt{Run: hosttest.NewRunner(d.run)}
	ctx := context.Background()
	open, err := c.IsOpen(ctx, "crypt-v")
	require.NoError(t, err)
	require.True(t, open)
	require.NoError(t, c.Close(ctx, "crypt-v"))
	require.NoError(t, c.Close(ctx, "crypt-v"), "closing a closed mapping is success")
	open, err = c.IsOpen(ctx, "crypt-v")
	require.NoError(t, err)
	require.False(t, open)

	busy := &Crypt{Run: hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		return host.Result{}, hosttest.Fail(cmd, 5, "Device crypt-v is still in use.")
	})}
	err = busy.Close(ctx, "crypt-v")
	require.ErrorContains(t, err, "still in use")
	require.False(t, errors.Is(err, ErrWrongKey))
}

func FuzzProviderAndSpec(f *testing.F) {
	for _, s := range []string{"luks", "luks2", "plain", "", "aes-xts-plain64", "LuksEncryptor", "a\x00b"} {
		f.Add(s, s, 256)
	}
	f.Fuzz(func(t *testing.T, provider, cipher string, size int) {
		p, err := ParseProvider(provider)
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		spec := Spec{Provider: p, Cipher: cipher, KeySize: size}
		if spec.Validate() == nil {
			require.False(t, strings.HasPrefix(cipher, "-"))
			require.NotContains(t, cipher, " ")
		}
	})
}

func TestResizeFeedsTheKeyOnStdin(t *testing.T) {
	var stdin string
	r := hosttest.NewRunner(func(_ context.Context, cmd host.Command) (host.Result, error) {
		stdin = string(cmd.Stdin)
		return host.Result{}, nil
	})
	c := &Crypt{Run: r}
	require.NoError(t, c.Resize(context.Background(), "crypt-v", key))
	require.Equal(t, []string{"cryptsetup resize --key-file=- crypt-v"}, r.Calls())
	require.Equal(t, pass, stdin)
	require.NotContains(t, string(r.Commands()[0].Stdin), pass, "the passphrase is wiped after use")
	require.ErrorContains(t, c.Resize(context.Background(), "a/b", key), "dm-crypt name")
}
