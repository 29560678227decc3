package attach

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/brick-storage/brick/connector"
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
