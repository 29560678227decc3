package host

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brick-storage/brick/ident"
)

// Command timeouts of the filesystem recipe.
const (
	BlkidTimeout = 30 * time.Second
	MkfsTimeout  = 10 * time.Minute
	MountTimeout = 2 * time.Minute
)

// MountableTypes are the filesystems brick mounts without being told the
// type: mainstream ones whose kernel code is hardened against bad images.
var MountableTypes = []string{"btrfs", "ext2", "ext3", "ext4", "vfat", "xfs"}

// FormatMount is one run of the recipe every user of a volume's
// filesystem needs (local-attach, the CSI node): format it if asked and
// blank, pick the type, mount it.
type FormatMount struct {
	Device, Dir string
	// Mkfs formats a blank device with this type first; MkfsForce skips
	// the zero-ends check (not blkid's).
	Mkfs      string
	MkfsForce bool
	// FSType is mount's -t as asked; empty: the type just made, or what
	// blkid finds among MountableTypes.
	FSType  string
	Options []string
}

// FormatAndMount runs the recipe and reports whether it formatted.
func (h *Host) FormatAndMount(ctx context.Context, r FormatMount) (formatted bool, err error) {
	made := ""
	if r.Mkfs != "" {
		if formatted, err = h.MkfsIfBlank(ctx, r.Device, r.Mkfs, r.MkfsForce); err != nil {
			return false, err
		}
		if formatted {
			made = r.Mkfs
		}
	}
	t, err := h.MountType(ctx, r.Device, r.FSType, made)
	if err != nil {
		return formatted, fmt.Errorf("mount %s on %s: %w", r.Device, r.Dir, err)
	}
	return formatted, h.Mount(ctx, r.Device, r.Dir, t, r.Options)
}

// MkfsIfBlank formats dev with fsType only when blkid's low-level probe
// finds no filesystem, RAID member or partition table on it, and its first
// and last MiB are all zeros (plain dm-crypt and raw data carry no
// signature) unless force. It reports whether it formatted.
func (h *Host) MkfsIfBlank(ctx context.Context, dev, fsType string, force bool) (bool, error) {
	found, err := h.Probe(ctx, dev)
	if err != nil {
		return false, err
	}
	if len(found) > 0 {
		h.Log.Info("not formatting: device already holds data", "device", dev, "probe", strings.Join(found, " "))
		return false, nil
	}
	if !force {
		if err := h.Block.CheckZeroEnds(dev); err != nil {
			return false, fmt.Errorf("not formatting %s: blkid finds no filesystem, but %w: it may hold plain dm-crypt or raw data; "+
				"pass --mkfs-force to format it anyway", dev, err)
		}
	}
	if _, err := h.Runner.Run(ctx, Command{Name: "mkfs." + fsType, Args: []string{dev}, Timeout: MkfsTimeout}); err != nil {
		return false, fmt.Errorf("mkfs.%s %s: %w", fsType, dev, err)
	}
	return true, nil
}

// Probe returns the KEY=value signatures blkid's low-level probe finds on
// dev (TYPE=ext4, PTTYPE=dos...); none for a device without any.
func (h *Host) Probe(ctx context.Context, dev string) ([]string, error) {
	// blkid -p: exit 0 = a signature was found, 2 = nothing found.
	res, err := h.Runner.Run(ctx, Command{
		Name: "blkid", Args: []string{"-p", "-o", "export", "--", dev},
		Timeout: BlkidTimeout, OKExitCodes: []int{0, 2},
	})
	if err != nil {
		return nil, fmt.Errorf("probe %s for a filesystem: %w", dev, err)
	}
	if res.ExitCode != 0 {
		return nil, nil
	}
	return strings.Fields(string(res.Stdout)), nil
}

// MountType is the -t of a mount of dev: the type asked for, the one
// brick just made, or what blkid finds if it is in MountableTypes. The
// kernel would otherwise guess it from data the volume's writer made.
func (h *Host) MountType(ctx context.Context, dev, asked, formatted string) (string, error) {
	switch {
	case asked != "":
		return asked, nil
	case formatted != "":
		return formatted, nil
	}
	found, err := h.Probe(ctx, dev)
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
	case !slices.Contains(MountableTypes, t):
		return "", fmt.Errorf("%s holds a %s filesystem, not one brick mounts unasked (%s): to mount it anyway pass --mount-fstype %s",
			dev, strconv.Quote(ident.Clip(t, 64)), strings.Join(MountableTypes, ", "), t)
	}
	return t, nil
}

// MountOptions are mount's -o: nosuid,nodev unless suidDev (set-uid
// programs and device nodes on a volume would be live for every local
// user), and ro for read-only mounts.
func MountOptions(readOnly, suidDev bool) []string {
	var o []string
	if !suidDev {
		o = append(o, "nosuid", "nodev")
	}
	if readOnly {
		o = append(o, "ro")
	}
	return o
}

// Mount mounts dev on dir (created if missing) with type fsType and opts.
// mount(8) follows links in every component of dir: whoever can replace
// one decides where root mounts, so dir and its parents must be real
// directories only root can change, checked before and after creating it.
func (h *Host) Mount(ctx context.Context, dev, dir, fsType string, opts []string) error {
	if err := h.FS.CheckTrustedPath(dir); err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	if err := h.FS.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create mountpoint %s: %w", dir, err)
	}
	if err := h.FS.CheckTrustedPath(dir); err != nil {
		return fmt.Errorf("mountpoint %s: %w", dir, err)
	}
	mounted, err := h.Sys.IsMounted(dir)
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
	if _, err := h.Runner.Run(ctx, Command{Name: "mount", Args: args, Timeout: MountTimeout}); err != nil {
		return fmt.Errorf("mount %s on %s: %w", dev, dir, err)
	}
	return nil
}

// Unmount unmounts dir if something is mounted there; not mounted is
// success.
func (h *Host) Unmount(ctx context.Context, dir string) error {
	mounted, err := h.Sys.IsMounted(dir)
	if err != nil || !mounted {
		return err
	}
	if _, err := h.Runner.Run(ctx, Command{Name: "umount", Args: []string{"--", dir}, Timeout: MountTimeout}); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}
