package dmcrypt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/secret"
)

// Opened is an open mapping.
type Opened struct {
	// Path is the plaintext device, /dev/mapper/<name>.
	Path string
	// Formatted says this open wrote a new LUKS header first (the
	// volume's first attach).
	Formatted bool
}

// Open maps dev (the ciphertext device) as /dev/mapper/<name> with key.
// Like os-brick, a device that luksOpen refuses as "not LUKS" and that
// isLuks confirms is not LUKS is formatted with spec and opened again; brick
// also refuses to format a device that holds any other signature, and never
// formats on a read-only open. key is not kept.
func (c *Crypt) Open(ctx context.Context, dev, name string, spec Spec, key secret.Value, readOnly bool) (Opened, error) {
	if err := spec.Validate(); err != nil {
		return Opened{}, err
	}
	if err := CheckName(name); err != nil {
		return Opened{}, err
	}
	if !strings.HasPrefix(dev, "/dev/") || strings.Contains(dev, "..") {
		return Opened{}, fmt.Errorf("device %q: not under /dev", dev)
	}
	if key.IsZero() {
		return Opened{}, errors.New("empty key")
	}
	pass := Passphrase(key)
	err := c.luksOpen(ctx, dev, name, pass, readOnly)
	if err == nil {
		return Opened{Path: MapperPath(name)}, nil
	}
	switch host.ExitCodeOf(err) {
	case exitNoPerm:
		return Opened{}, fmt.Errorf("open %s: %w", dev, ErrWrongKey)
	case exitWrongParams:
	default:
		return Opened{}, fmt.Errorf("open %s: %w", dev, err)
	}
	if luks, lerr := c.isLUKS(ctx, dev); lerr != nil || luks {
		return Opened{}, fmt.Errorf("open %s: %w", dev, err)
	}
	if readOnly {
		return Opened{}, fmt.Errorf("open %s: the volume was never LUKS formatted and a read-only attach cannot format it: attach it read-write once", dev)
	}
	if c.NeverFormat {
		return Opened{}, fmt.Errorf("open %s: it has no LUKS header, though it had one when it was attached: refusing to format it again; check what the volume holds", dev)
	}
	if err := c.format(ctx, dev, spec, pass, len(key.Reveal())); err != nil {
		return Opened{}, err
	}
	if err := c.luksOpen(ctx, dev, name, pass, false); err != nil {
		return Opened{}, fmt.Errorf("open %s after formatting it: %w", dev, err)
	}
	return Opened{Path: MapperPath(name), Formatted: true}, nil
}

func (c *Crypt) luksOpen(ctx context.Context, dev, name string, pass secret.Value, readOnly bool) error {
	args := []string{"luksOpen", "--key-file=-"}
	if readOnly {
		args = append(args, "--readonly")
	}
	args = append(args, dev, name)
	cmd, in := stdin(host.Command{Name: "cryptsetup", Args: args, Timeout: c.timeout(false)}, pass)
	defer clear(in)
	_, err := c.Run.Run(ctx, cmd)
	return err
}

// isLUKS is cryptsetup isLuks: exit 0 yes, 1 no.
func (c *Crypt) isLUKS(ctx context.Context, dev string) (bool, error) {
	_, err := c.Run.Run(ctx, host.Command{Name: "cryptsetup", Args: []string{"isLuks", dev}, Timeout: c.timeout(false)})
	if err == nil {
		return true, nil
	}
	if host.ExitCodeOf(err) == exitWrongParams {
		return false, nil
	}
	return false, fmt.Errorf("isLuks %s: %w", dev, err)
}

// format writes a new LUKS header for a key of keyLen bytes, after checking
// that the device holds no other signature (os-brick formats whatever is
// not LUKS).
func (c *Crypt) format(ctx context.Context, dev string, spec Spec, pass secret.Value, keyLen int) error {
	res, err := c.Run.Run(ctx, host.Command{Name: "blkid", Args: []string{"-p", "-o", "value", "-s", "TYPE", dev},
		Timeout: c.timeout(false), OKExitCodes: []int{exitBlkidNone}})
	if err != nil {
		return fmt.Errorf("check %s is blank before formatting: %w", dev, err)
	}
	if res.ExitCode == 0 {
		return fmt.Errorf("format %s: %w (blkid: %s): refusing to overwrite it with a LUKS header",
			dev, ErrNotBlank, ident.Clip(strings.TrimSpace(string(res.Stdout)), 40))
	}
	if err := c.checkZeroEnds(dev); err != nil {
		return err
	}
	args := []string{"--batch-mode", "luksFormat", "--type", formatType(spec.Provider), "--key-file=-"}
	if spec.Cipher != "" {
		args = append(args, "--cipher", spec.Cipher)
	}
	if spec.KeySize != 0 {
		args = append(args, "--key-size", fmt.Sprint(spec.KeySize))
	}
	args = append(args, kdfArgs(keyLen)...)
	args = append(args, dev)
	cmd, in := stdin(host.Command{Name: "cryptsetup", Args: args, Timeout: c.timeout(true)}, pass)
	defer clear(in)
	if _, err = c.Run.Run(ctx, cmd); err != nil {
		return fmt.Errorf("format %s: %w", dev, err)
	}
	return nil
}

// checkZeroEnds refuses a device whose ends hold data, unless ForceFormat.
func (c *Crypt) checkZeroEnds(dev string) error {
	switch {
	case c.ForceFormat:
		return nil
	case c.Blank == nil:
		return fmt.Errorf("format %s: no blank check configured: refusing to write a LUKS header", dev)
	}
	err := c.Blank.CheckZeroEnds(dev)
	if errors.Is(err, host.ErrNotZero) {
		return fmt.Errorf("format %s: %w: blkid finds no signature, but %w: refusing to overwrite it with a LUKS header; "+
			"if the volume is new, pass --mkfs-force to format it anyway", dev, ErrNotBlank, err)
	}
	return err
}

// Close removes the mapping; a mapping that is not there is success.
func (c *Crypt) Close(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	_, err := c.Run.Run(ctx, host.Command{Name: "cryptsetup", Args: []string{"close", name},
		Timeout: c.timeout(false), OKExitCodes: []int{exitNoDevice}})
	if err != nil {
		return fmt.Errorf("close %s: %w", MapperPath(name), err)
	}
	return nil
}

// IsOpen reports whether the mapping exists (cryptsetup status: 0 active,
// 4 not).
func (c *Crypt) IsOpen(ctx context.Context, name string) (bool, error) {
	if err := CheckName(name); err != nil {
		return false, err
	}
	res, err := c.Run.Run(ctx, host.Command{Name: "cryptsetup", Args: []string{"status", name},
		Timeout: c.timeout(false), OKExitCodes: []int{exitNoDevice}})
	if err != nil {
		return false, fmt.Errorf("status %s: %w", MapperPath(name), err)
	}
	return res.ExitCode == 0, nil
}

// Resize grows an open mapping to its device's new size (after a volume
// extend). LUKS2 may ask for the passphrase, so key goes on stdin as for
// an open; key is not kept.
func (c *Crypt) Resize(ctx context.Context, name string, key secret.Value) error {
	if err := CheckName(name); err != nil {
		return err
	}
	cmd, in := stdin(host.Command{Name: "cryptsetup", Args: []string{"resize", "--key-file=-", name}, Timeout: c.timeout(false)}, Passphrase(key))
	defer clear(in)
	if _, err := c.Run.Run(ctx, cmd); err != nil {
		return fmt.Errorf("resize %s: %w", MapperPath(name), err)
	}
	return nil
}

// kdfArgs: a key of 128 bits or more is random (Barbican's, a fixed key), so its entropy, not
// stretching, stops brute force; cryptsetup's least PBKDF2 cost spares seconds per format and open.
func kdfArgs(keyLen int) []string {
	if keyLen < 128/8 {
		return nil
	}
	return []string{"--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"}
}

// formatType is luksFormat's --type for p: cryptsetup 2 reads "luks" as its
// default version (LUKS2), so provider luks must say luks1, as os-brick's
// LuksEncryptor does.
func formatType(p Provider) string {
	if p == LUKS {
		return "luks1"
	}
	return string(p)
}
