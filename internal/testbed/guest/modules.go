package guest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// initramfsModules are the modules the first stage needs to mount the host's
// root over virtio-9p and put an overlay on it. Everything else is loaded
// later with modprobe from the shared root.
var initramfsModules = []string{"virtio_pci", "9pnet_virtio", "9p", "overlay"}

// parseShowDepends turns `modprobe --show-depends` output into the .ko paths
// to insmod, in order. Built-in modules need nothing. Paths already listed
// (a dependency shared by two modules) are kept at their first position.
func parseShowDepends(out []byte, seen map[string]bool) ([]string, error) {
	var paths []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "builtin":
			continue
		case "insmod":
			if len(fields) < 2 {
				return nil, fmt.Errorf("parse modprobe output: insmod line without a path: %q", sc.Text())
			}
			p := fields[1]
			// Module parameters after the path would be lost by insmod from
			// a list file; none of our modules has any.
			if len(fields) > 2 {
				return nil, fmt.Errorf("parse modprobe output: unexpected module parameters in %q", sc.Text())
			}
			if !strings.HasSuffix(p, ".ko") {
				return nil, fmt.Errorf("parse modprobe output: %s is compressed or not a module; busybox insmod needs plain .ko", p)
			}
			if seen[p] {
				continue
			}
			seen[p] = true
			paths = append(paths, p)
		default:
			return nil, fmt.Errorf("parse modprobe output: unexpected line %q", sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("parse modprobe output: %w", err)
	}
	return paths, nil
}

// moduleOrder asks the host's modprobe for the .ko files of mods (and their
// dependencies) for kernel kver, in load order.
func moduleOrder(ctx context.Context, kver string, mods []string) ([]string, error) {
	seen := map[string]bool{}
	var all []string
	for _, m := range mods {
		// One module per call: extra arguments would be taken as module
		// parameters.
		cmd := exec.CommandContext(ctx, "modprobe", "-S", kver, "--show-depends", m)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("modprobe -S %s --show-depends %s: %w: %s", kver, m, err, strings.TrimSpace(stderr.String()))
		}
		paths, err := parseShowDepends(out, seen)
		if err != nil {
			return nil, fmt.Errorf("modules for %s: %w", m, err)
		}
		all = append(all, paths...)
	}
	return all, nil
}
