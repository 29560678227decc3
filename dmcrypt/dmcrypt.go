// Package dmcrypt opens and closes Cinder's front-end encrypted volumes with
// cryptsetup the way os-brick's encryptors do, so that a volume brick
// formats opens on a Nova compute host and the reverse: the passphrase is
// the key's bytes in lowercase hex, fed on stdin (--key-file=-), and a
// volume that is not LUKS yet is formatted on its first attach.
//
// Keys and passphrases are secret.Values, which never print; they reach
// only host.Command's Stdin (wiped after the command) and its list of
// secrets to mask, never argv, logs, errors or files.
package dmcrypt

import (
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/secret"
)

// Provider is a dm-crypt format Cinder's encryption types name.
type Provider string

// Providers brick opens.
const (
	LUKS  Provider = "luks"  // LUKS1 (cryptsetup --type luks1)
	LUKS2 Provider = "luks2" // LUKS2
)

// ErrUnsupported is a provider brick does not open.
var ErrUnsupported = errors.New("unsupported encryption provider")

// ErrNotEncrypted is a provider that means "no front-end encryption"
// (os-brick's no-op encryptor).
var ErrNotEncrypted = errors.New("no front-end encryption")

// ParseProvider maps what Cinder's encryption metadata says to a Provider:
// the format names and the class names os-brick still accepts for them.
// plain dm-crypt is refused: it has no header, so a wrong key opens as
// garbage without an error and a later mkfs would destroy the data, and
// os-brick itself has deprecated it.
func ParseProvider(s string) (Provider, error) {
	switch s {
	case "luks", "LuksEncryptor", "nova.volume.encryptors.luks.LuksEncryptor", "os_brick.encryptors.luks.LuksEncryptor":
		return LUKS, nil
	case "luks2", "Luks2Encryptor", "os_brick.encryptors.luks.Luks2Encryptor":
		return LUKS2, nil
	case "plain", "CryptsetupEncryptor", "nova.volume.encryptors.cryptsetup.CryptsetupEncryptor",
		"os_brick.encryptors.cryptsetup.CryptsetupEncryptor":
		return "", fmt.Errorf("%w: plain dm-crypt has no header to check the key against "+
			"(a wrong key opens as garbage) and os-brick has deprecated it: retype the volume to luks or luks2", ErrUnsupported)
	case "", "NoOpEncryptor", "nova.volume.encryptors.nop.NoopEncryptor", "os_brick.encryptors.nop.NoopEncryptor":
		return "", ErrNotEncrypted
	}
	return "", fmt.Errorf("%w %s: brick opens luks and luks2", ErrUnsupported, strconv.QuoteToASCII(ident.Clip(s, 80)))
}

// Spec is how a volume is encrypted.
type Spec struct {
	Provider Provider
	// Cipher is cryptsetup's --cipher (e.g. aes-xts-plain64); "" leaves
	// cryptsetup's default.
	Cipher string
	// KeySize is cryptsetup's --key-size in bits; 0 leaves the default.
	KeySize int
}

// Compiled on first use: every brick run (get-connector too) links this
// package, and the bounded repetitions are costly to compile.
var cipherRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9:_-]{0,63}$`) })

// Validate checks a Spec that came from Cinder before any of it reaches a
// command line.
func (s Spec) Validate() error {
	if s.Provider != LUKS && s.Provider != LUKS2 {
		return fmt.Errorf("%w %s", ErrUnsupported, strconv.QuoteToASCII(ident.Clip(string(s.Provider), 80)))
	}
	if s.Cipher != "" && !cipherRE().MatchString(s.Cipher) {
		return fmt.Errorf("cipher %s: not a cryptsetup cipher name", strconv.QuoteToASCII(ident.Clip(s.Cipher, 80)))
	}
	if s.KeySize < 0 || s.KeySize > 4096 || s.KeySize%8 != 0 {
		return fmt.Errorf("key size %d: want a multiple of 8 bits up to 4096", s.KeySize)
	}
	return nil
}

// Passphrase is what os-brick's encryptors hand cryptsetup for a key: its
// bytes as lowercase hex (os-brick's _get_passphrase).
func Passphrase(key secret.Value) secret.Value {
	return secret.New(hex.EncodeToString([]byte(key.Reveal())))
}

// stdin is a secret as a command's Stdin and masked text; the caller
// wipes the slice once the command is done.
func stdin(cmd host.Command, pass secret.Value) (host.Command, []byte) {
	in := []byte(pass.Reveal())
	cmd.Stdin, cmd.Secrets = in, []string{pass.Reveal()}
	return cmd, in
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,126}$`) })

// MapperPath is the device of an open mapping.
func MapperPath(name string) string { return "/dev/mapper/" + name }

// CheckName refuses a mapping name that is not a plain device-mapper name.
func CheckName(name string) error {
	if !nameRE().MatchString(name) {
		return fmt.Errorf("dm-crypt name %s: want letters, digits and _.+- (up to 127)", strconv.QuoteToASCII(ident.Clip(name, 80)))
	}
	return nil
}

// Default timeouts: luksFormat spends seconds on key derivation on a busy
// host; the rest are quick.
const (
	DefaultFormatTimeout = 2 * time.Minute
	DefaultTimeout       = time.Minute
)

// ZeroChecker tells whether a device's ends are all zeros
// (host.BlockDevices is one).
type ZeroChecker interface {
	CheckZeroEnds(devPath string) error
}

// Crypt runs cryptsetup through a host.Runner.
type Crypt struct {
	Run host.Runner
	// Blank checks a device's ends before its first luksFormat: blkid
	// finds no signature on raw data or plain dm-crypt, and a header
	// written over them destroys them. Without it nothing is formatted.
	Blank ZeroChecker
	// ForceFormat formats a device blkid finds nothing on even when its
	// ends hold data (--mkfs-force).
	ForceFormat bool
	// NeverFormat opens only: a restore re-opens what an attach formatted.
	NeverFormat bool
	// FormatTimeout bounds luksFormat, Timeout every other command
	// (defaults above when zero).
	FormatTimeout, Timeout time.Duration
}

func (c *Crypt) timeout(format bool) time.Duration {
	switch {
	case format && c.FormatTimeout > 0:
		return c.FormatTimeout
	case format:
		return DefaultFormatTimeout
	case c.Timeout > 0:
		return c.Timeout
	}
	return DefaultTimeout
}

// cryptsetup exit codes (cryptsetup(8)).
const (
	exitWrongParams = 1 // also: not a LUKS device
	exitNoPerm      = 2 // wrong passphrase
	exitNoDevice    = 4 // wrong device specified (luksClose of a closed one)
	exitBlkidNone   = 2 // blkid found no signature
)

// ErrWrongKey is a key that does not open the volume's header.
var ErrWrongKey = errors.New("the key does not open this volume's LUKS header")

// ErrNotBlank guards the first-attach format: the device is not LUKS but
// holds something else.
var ErrNotBlank = errors.New("not LUKS formatted but not blank either")
