package guest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	scripts "github.com/brick-storage/brick/test/guest"
)

// initramfsInputs is everything the initramfs is made of. The cache key is a
// hash over all of it, so a kernel update, a new busybox or an edited
// rdinit.sh each give a fresh image.
type initramfsInputs struct {
	KernelVersion string
	Busybox       []byte
	RDInit        []byte
	Modules       []namedFile // in insmod order
}

type namedFile struct {
	Name string
	Data []byte
}

func (in initramfsInputs) key() string {
	h := sha256.New()
	// Length-prefix every field so that moving bytes between fields changes
	// the hash.
	put := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	put([]byte("brick-initramfs-v1"))
	put([]byte(in.KernelVersion))
	put(in.Busybox)
	put(in.RDInit)
	for _, m := range in.Modules {
		put([]byte(m.Name))
		put(m.Data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// entries lays out the initramfs: /init, a static busybox, /dev/console (the
// kernel opens it for init's stdio before anything is mounted) and the
// modules with a list file giving their load order.
func (in initramfsInputs) entries() []cpioEntry {
	es := []cpioEntry{
		{Name: "bin", Mode: modeDir | 0o755},
		{Name: "dev", Mode: modeDir | 0o755},
		{Name: "dev/console", Mode: modeChar | 0o600, RdevMajor: 5, RdevMinor: 1},
		{Name: "proc", Mode: modeDir | 0o755},
		{Name: "sys", Mode: modeDir | 0o755},
		{Name: "newroot", Mode: modeDir | 0o755},
		{Name: "modules", Mode: modeDir | 0o755},
		{Name: "bin/busybox", Mode: modeFile | 0o755, Data: in.Busybox},
		{Name: "init", Mode: modeFile | 0o755, Data: in.RDInit},
	}
	var order bytes.Buffer
	for i, m := range in.Modules {
		// The index keeps names unique and the listing readable.
		name := fmt.Sprintf("%02d-%s", i, m.Name)
		es = append(es, cpioEntry{Name: "modules/" + name, Mode: modeFile | 0o644, Data: m.Data})
		fmt.Fprintln(&order, name)
	}
	es = append(es, cpioEntry{Name: "modules/order", Mode: modeFile | 0o644, Data: order.Bytes()})
	return es
}

// ensureInitramfs returns the path of the cached initramfs for kernel k,
// building it first if needed. Concurrent callers (several test processes)
// are safe: each writes a temporary file and renames it into place.
func ensureInitramfs(ctx context.Context, cacheDir string, k Kernel, busyboxPath string) (string, error) {
	in, err := gatherInitramfsInputs(ctx, k, busyboxPath)
	if err != nil {
		return "", err
	}
	path := filepath.Join(cacheDir, fmt.Sprintf("initramfs-%s-%s.cpio", k.Version, in.key()))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("create initramfs cache %s: %w", cacheDir, err)
	}
	var buf bytes.Buffer
	if err := writeCPIO(&buf, in.entries()); err != nil {
		return "", fmt.Errorf("build initramfs: %w", err)
	}
	tmp, err := os.CreateTemp(cacheDir, ".initramfs-*")
	if err != nil {
		return "", fmt.Errorf("write initramfs: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write initramfs %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write initramfs %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("install initramfs %s: %w", path, err)
	}
	return path, nil
}

func gatherInitramfsInputs(ctx context.Context, k Kernel, busyboxPath string) (initramfsInputs, error) {
	bb, err := os.ReadFile(busyboxPath)
	if err != nil {
		return initramfsInputs{}, fmt.Errorf("read busybox (install busybox-static): %w", err)
	}
	if err := checkStatic(busyboxPath); err != nil {
		return initramfsInputs{}, err
	}
	paths, err := moduleOrder(ctx, k.Version, initramfsModules)
	if err != nil {
		return initramfsInputs{}, fmt.Errorf("list initramfs modules: %w", err)
	}
	in := initramfsInputs{KernelVersion: k.Version, Busybox: bb, RDInit: scripts.RDInit}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return initramfsInputs{}, fmt.Errorf("read module: %w", err)
		}
		in.Modules = append(in.Modules, namedFile{Name: filepath.Base(p), Data: data})
	}
	return in, nil
}

// checkStatic refuses a dynamically linked busybox: the initramfs has no
// libc, so it would fail only at boot, with a cryptic panic.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("inspect busybox %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("busybox %s is dynamically linked; install busybox-static", path)
		}
	}
	return nil
}
