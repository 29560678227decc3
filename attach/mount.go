package attach

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// Command timeouts of the mount steps.
const (
	blkidTimeout = 30 * time.Second
	mkfsTimeout  = 10 * time.Minute
	mountTimeout = 2 * time.Minute
)

// checkMountpoint accepts a clean absolute directory path other than "/".
func checkMountpoint(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("--mountpoint %s: must be an absolute path", connector.Quote(p))
	case len(p) > 4000:
		return fmt.Errorf("--mountpoint: longer than 4000 bytes")
	case strings.ContainsAny(p, "\x00\n\r\t\\"):
		return fmt.Errorf("--mountpoint %s: control characters or backslashes", connector.Quote(p))
	case path.Clean(p) != p || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return fmt.Errorf("--mountpoint %s: must be a clean path (no .., //, trailing /)", connector.Quote(p))
	case p == "/":
		return fmt.Errorf("--mountpoint: refusing to mount over /")
	}
	for _, k := range []string{"/proc", "/sys", "/dev", "/run/lock/brick"} {
		if p == k || strings.HasPrefix(p, k+"/") {
			return fmt.Errorf("--mountpoint %s: under %s, which the kernel or brick owns; pick a directory such as /srv/NAME or /mnt/NAME", connector.Quote(p), k)
		}
	}
	return nil
}

var fsTypeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]{1,15}$`) })

// checkFSType accepts a short lowercase filesystem name (mkfs.<type>).
func checkFSType(flag, t string) error {
	if !fsTypeRE().MatchString(t) {
		return fmt.Errorf("%s %s: not a filesystem type name (e.g. ext4, xfs)", flag, connector.Quote(t))
	}
	return nil
}

// mkfsIfBlank formats dev with fsType only when blkid's low-level probe
// finds no filesystem, RAID member or partition table on it, and its first
// and last MiB are all zeros (plain dm-crypt and raw data carry no
// signature) unless force. It reports whether it formatted.
func (m *Manager) mkfsIfBlank(ctx context.Context, dev, fsType string, force bool) (bool, error) {
	found, err := m.probe(ctx, dev)
	if err != nil {
		return false, err
	}
	if len(found) > 0 {
		m.Host.Log.Info("not formatting: device already holds data", "device", dev, "probe", strings.Join(found, " "))
		return false, nil
	}
	if !force {
		if err := m.Host.Block.CheckZeroEnds(dev); err != nil {
			return false, fmt.Errorf("not formatting %s: blkid finds no filesystem, but %w: it may hold plain dm-crypt or raw data; "+
				"pass --mkfs-force to format it anyway", dev, err)
		}
	}
	if _, err := m.Host.Runner.Run(ctx, host.Command{
		Name: "mkfs." + fsType, Args: []string{dev}, Timeout: mkfsTimeout,
	}); err != nil {
		return false, fmt.Errorf("mkfs.%s %s: %w", fsType, dev, err)
	}
	return true, nil
}

// probe returns the KEY=value signatures blkid's low-level probe finds on
// dev (TYPE=ext4, PTTYPE=dos...); none for a device without any.
func (m *Manager) probe(ctx context.Context, dev string) ([]string, error) {
	// blkid -p: exit 0 = a signature was found, 2 = nothing found.
	res, err := m.Host.Runner.Run(ctx, host.Command{
		Name: "blkid", Args: []string{"-p", "-o", "export", "--", dev},
		Timeout: blkidTimeout, OKExitCodes: []int{0, 2},
	})
	if err != nil {
		return nil, fmt.Errorf("probe %s for a filesystem: %w", dev, err)
	}
	if res.ExitCode != 0 {
		return nil, nil
	}
	return strings.Fields(string(res.Stdout)), nil
}

// mountableTypes are the filesystems brick mounts without being told the
// type: mainstream ones whose kernel code is hardened against bad images.
var mountableTypes = []string{"btrfs", "ext2", "ext3", "ext4", "vfat", "xfs"}

// mountType is the -t of a mount of dev: the type asked for, the one
// brick just made, or what blkid finds if it is in mountableTypes. The
// kernel would otherwise guess it from data the volume's writer made.
func (m *Manager) mountType(ctx context.Context, dev, asked, formatted string) (string, error) {
	switch {
	case asked != "":
		return asked, nil
	case formatted != "":
		return formatted, nil
	}
	found, err := m.probe(ctx, dev)
	if err != nil {
		return "", err
	}
	t := ""
	for _, kv := range found {
		if v, ok := strings.CutPrefix(kv, "TYPE="); ok {
			t = v
		}
	}
	switch {
	case t == "":
		what := "no signature"
		if len(found) > 0 {
			what = "only " + strings.Join(found, " ")
		}
		return "", fmt.Errorf("no filesystem on %s (blkid finds %s): format it with --mkfs TYPE, or name its type with --mount-fstype",
			dev, what)
	case !slices.Contains(mountableTypes, t):
		return "", fmt.Errorf("%s holds a %s filesystem, not one brick mounts unasked (%s): to mount it anyway pass --mount-fstype %s",
			dev, connector.Quote(t), strings.Join(mountableTypes, ", "), t)
	}
	return t, nil
}

// mountOptions are mount's -o: nosuid,nodev unless suidDev (set-uid
// programs and device nodes on a volume would be live for every local
// user), and ro for read-only attachments.
func mountOptions(mode string, suidDev bool) []string {
	var o []string
	if !suidDev {
		o = append(o, "nosuid", "nodev")
	}
	if mode == "ro" {
		o = append(o, "ro")
	}
	return o
}

// mount mounts dev on dir (created if missing) with type fsType and opts.
// mount(8) follows links in every component of dir: whoever can replace
// one decides where root mounts, so dir and its parents must be real
// directories only root can change, checked before and after creating it.
func (m *Manager) mount(ctx context.Context, dev, dir, fsType string, opts []string) error {
	if err := m.Host.FS.CheckTrustedPath(dir); err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	if err := m.Host.FS.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create mountpoint %s: %w", dir, err)
	}
	if err := m.Host.FS.CheckTrustedPath(dir); err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	mounted, err := m.isMounted(dir)
	if err != nil {
		return err
	}
	if mounted {
		return fmt.Errorf("mount %s on %s: something is already mounted there", dev, dir)
	}
	args := []string{"-t", fsType}
	if len(opts) > 0 {
		args = append(args, "-o", strings.Join(opts, ","))
	}
	args = append(args, "--", dev, dir)
	if _, err := m.Host.Runner.Run(ctx, host.Command{Name: "mount", Args: args, Timeout: mountTimeout}); err != nil {
		return fmt.Errorf("mount %s on %s: %w", dev, dir, err)
	}
	return nil
}

// unmount unmounts dir if something is mounted there; not mounted is
// success.
func (m *Manager) unmount(ctx context.Context, dir string, _ bool) error {
	mounted, err := m.isMounted(dir)
	if err != nil {
		return err
	}
	if !mounted {
		return nil
	}
	if _, err := m.Host.Runner.Run(ctx, host.Command{Name: "umount", Args: []string{"--", dir}, Timeout: mountTimeout}); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

func (m *Manager) isMounted(dir string) (bool, error) {
	mounts, err := m.Host.Sys.Mounts()
	if err != nil {
		return false, err
	}
	for _, mt := range mounts {
		if mt.MountPoint == dir {
			return true, nil
		}
	}
	return false, nil
}
