package guest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Kernel is a kernel image with the module tree that belongs to it.
type Kernel struct {
	Version string // e.g. 6.1.0-57-amd64
	Image   string // e.g. /boot/vmlinuz-6.1.0-57-amd64
}

// findKernel picks the kernel to boot from bootDir: want if set, otherwise
// the newest vmlinuz-* whose modules are installed under modulesDir. A kernel
// without modules (like the host's own running kernel, if it shows up in
// /boot) cannot load iSCSI, dm or 9p and is skipped.
func findKernel(bootDir, modulesDir, want string) (Kernel, error) {
	hasModules := func(v string) bool {
		_, err := os.Stat(filepath.Join(modulesDir, v, "modules.dep"))
		return err == nil
	}
	if want != "" {
		k := Kernel{Version: want, Image: filepath.Join(bootDir, "vmlinuz-"+want)}
		if _, err := os.Stat(k.Image); err != nil {
			return Kernel{}, fmt.Errorf("find kernel %s: %w", want, err)
		}
		if !hasModules(want) {
			return Kernel{}, fmt.Errorf("find kernel %s: no %s", want, filepath.Join(modulesDir, want, "modules.dep"))
		}
		return k, nil
	}
	images, err := filepath.Glob(filepath.Join(bootDir, "vmlinuz-*"))
	if err != nil {
		return Kernel{}, fmt.Errorf("find kernel in %s: %w", bootDir, err)
	}
	var best Kernel
	for _, img := range images {
		v := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		if !hasModules(v) {
			continue
		}
		if best.Version == "" || compareVersions(v, best.Version) > 0 {
			best = Kernel{Version: v, Image: img}
		}
	}
	if best.Version == "" {
		return Kernel{}, fmt.Errorf("find kernel: no vmlinuz-* in %s with modules in %s (install linux-image-amd64: test/install.sh)", bootDir, modulesDir)
	}
	return best, nil
}

// compareVersions orders kernel release strings: runs of digits compare as
// numbers, everything else bytewise, so 6.1.0-10 sorts after 6.1.0-9.
func compareVersions(a, b string) int {
	for a != "" && b != "" {
		ca, ra := splitRun(a)
		cb, rb := splitRun(b)
		if c := compareRun(ca, cb); c != 0 {
			return c
		}
		a, b = ra, rb
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	default:
		return 1
	}
}

// splitRun returns the leading run of digits or of non-digits and the rest.
func splitRun(s string) (string, string) {
	digit := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == digit {
		i++
	}
	return s[:i], s[i:]
}

func compareRun(a, b string) int {
	if isDigit(a[0]) && isDigit(b[0]) {
		na, errA := strconv.ParseUint(a, 10, 64)
		nb, errB := strconv.ParseUint(b, 10, 64)
		if errA == nil && errB == nil {
			switch {
			case na < nb:
				return -1
			case na > nb:
				return 1
			}
			return 0
		}
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
