package guest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// A bzImage decompresses its kernel inside the guest before the kernel's
// clock starts: Debian's XZ payload takes seconds of emulated CPU under TCG
// on every boot. qemu boots an uncompressed vmlinux with a PVH entry note
// (CONFIG_PVH) directly, so bootImage extracts it once per kernel into the
// cache.

// noPVHEnv set to 0 boots the vmlinuz as before (to tell whether a boot
// problem comes from the PVH entry).
const noPVHEnv = "BRICK_GUEST_PVH"

// xzMagic starts an XZ stream (the bzImage payload of Debian's kernels).
var xzMagic = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}

// bootImage returns the kernel file qemu boots for k: the cached vmlinux
// with a PVH entry, extracted now if need be, or k.Image itself when the
// image holds no such kernel (another compression, no CONFIG_PVH) or the
// extraction fails.
func bootImage(ctx context.Context, cacheDir string, k Kernel) string {
	if os.Getenv(noPVHEnv) == "0" {
		return k.Image
	}
	path, err := ensureVmlinux(ctx, cacheDir, k)
	if err != nil {
		return k.Image
	}
	return path
}

// ensureVmlinux extracts k's vmlinux into cacheDir (keyed by the image's
// hash) unless it is there, and checks that it has a PVH entry.
func ensureVmlinux(ctx context.Context, cacheDir string, k Kernel) (string, error) {
	image, err := os.ReadFile(k.Image)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(image)
	path := filepath.Join(cacheDir, fmt.Sprintf("vmlinux-%s-%s", k.Version, hex.EncodeToString(sum[:8])))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	i := bytes.Index(image, xzMagic)
	if i < 0 {
		return "", errors.New("no XZ payload")
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(cacheDir, ".vmlinux-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	// --single-stream: the bzImage goes on after the payload.
	cmd := exec.CommandContext(ctx, "xz", "-dc", "--single-stream")
	cmd.Stdin = bytes.NewReader(image[i:])
	cmd.Stdout = tmp
	err = cmd.Run()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("extract vmlinux from %s: %w", k.Image, err)
	}
	if ok, err := hasPVHEntry(tmp.Name()); err != nil || !ok {
		return "", fmt.Errorf("vmlinux of %s: no PVH entry (%v)", k.Image, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

// hasPVHEntry reports whether the ELF file at path carries the Xen
// PHYS32_ENTRY note qemu's PVH boot needs.
func hasPVHEntry(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			return false, err
		}
		if hasXenNote(data, f.ByteOrder, xenElfnotePhys32Entry) {
			return true, nil
		}
	}
	return false, nil
}

// xenElfnotePhys32Entry is XEN_ELFNOTE_PHYS32_ENTRY.
const xenElfnotePhys32Entry = 18

// hasXenNote walks an ELF note segment (namesz, descsz, type, name, desc,
// each padded to 4 bytes) for a "Xen" note of type typ.
func hasXenNote(data []byte, order binary.ByteOrder, typ uint32) bool {
	for len(data) >= 12 {
		namesz, descsz, t := uint64(order.Uint32(data)), uint64(order.Uint32(data[4:])), order.Uint32(data[8:])
		data = data[12:]
		if namesz > uint64(len(data)) {
			return false
		}
		if t == typ && string(bytes.TrimRight(data[:namesz], "\x00")) == "Xen" {
			return true
		}
		skip := (namesz+3)&^3 + (descsz+3)&^3
		if skip > uint64(len(data)) {
			return false
		}
		data = data[skip:]
	}
	return false
}
