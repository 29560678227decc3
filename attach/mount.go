package attach

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
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
		return fmt.Errorf("mountpoint %s: must be an absolute path", connector.Quote(p))
	case len(p) > 4000:
		return fmt.Errorf("mountpoint: longer than 4000 bytes")
	case strings.ContainsAny(p, "\x00\n\r\t\\"):
		return fmt.Errorf("mountpoint %s: control characters or backslashes", connector.Quote(p))
	case path.Clean(p) != p || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return fmt.Errorf("mountpoint %s: must be a clean path (no .., //, trailing /)", connector.Quote(p))
	case p == "/":
		return fmt.Errorf("mountpoint: refusing to mount over /")
	}
	return nil
}

var fsTypeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]{1,15}$`) })

// checkFSType accepts a short lowercase filesystem name (mkfs.<type>).
func checkFSType(t string) error {
	if !fsTypeRE().MatchString(t) {
		return fmt.Errorf("--mkfs %s: not a filesystem type name (e.g. ext4, xfs)", connector.Quote(t))
	}
	return nil
}

// mkfsIfBlank formats dev with fsType only when blkid's low-level probe
// finds no filesystem, RAID member or partition table on it. It reports
// whether it formatted.
func (m *Manager) mkfsIfBlank(ctx context.Context, dev, fsType string) (bool, error) {
	// blkid -p: exit 0 = a signature was found, 2 = nothing found.
	res, err := m.Host.Runner.Run(ctx, host.Command{
		Name: "blkid", Args: []string{"-p", "-o", "export", "--", dev},
		Timeout: blkidTimeout, OKExitCodes: []int{0, 2},
	})
	if err != nil {
		return false, fmt.Errorf("probe %s for a filesystem: %w", dev, err)
	}
	if res.ExitCode == 0 {
		m.Host.Log.Info("not formatting: device already holds data", "device", dev, "probe", strings.Join(strings.Fields(string(res.Stdout)), " "))
		return false, nil
	}
	if _, err := m.Host.Runner.Run(ctx, host.Command{
		Name: "mkfs." + fsType, Args: []string{dev}, Timeout: mkfsTimeout,
	}); err != nil {
		return false, fmt.Errorf("mkfs.%s %s: %w", fsType, dev, err)
	}
	return true, nil
}

// mount mounts dev on dir (created if missing), read-only for "ro".
func (m *Manager) mount(ctx context.Context, dev, dir, mode string) error {
	if err := os.MkdirAll(m.Host.FS.Path(dir), 0o755); err != nil {
		return fmt.Errorf("create mountpoint %s: %w", dir, err)
	}
	mounted, err := m.isMounted(dir)
	if err != nil {
		return err
	}
	if mounted {
		return fmt.Errorf("mount %s on %s: something is already mounted there", dev, dir)
	}
	args := []string{}
	if mode == "ro" {
		args = append(args, "-o", "ro")
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
