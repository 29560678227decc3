package rbd

import (
	"fmt"
	"strings"
	"time"

	"github.com/brick-storage/brick/host"
)

// DefaultTempDir is the host directory (root-owned, 0700) under which a
// connection info's key briefly lives while rbd maps the image. /run is a
// tmpfs, so a key that a killed brick left behind does not survive a reboot.
const DefaultTempDir = host.RunDir + "/ceph"

// credsAge: a credentials directory older than Stale belongs to a brick
// process that died before its cleanup ran (a map never takes this long);
// one without its lock file is Grace old only when its brick died between
// creating and locking it.
var credsAge = host.ScratchAge{Stale: time.Hour, Grace: time.Minute}

// credsPrefix names the credentials directories under the temp dir.
const credsPrefix = "map-"

// creds is a private directory holding a Ceph config and keyring for one
// rbd call. ConfPath is the real path handed to rbd.
type creds struct {
	*host.Scratch
	ConfPath string
	KeyPath  string
}

// remove deletes the directory and everything in it, then drops the lock;
// already gone is fine.
func (c *creds) remove() error {
	if c == nil {
		return nil
	}
	if err := c.Remove(); err != nil {
		return fmt.Errorf("remove temporary ceph credentials: %w", err)
	}
	return nil
}

// writeCreds writes v's key into a fresh 0600 keyring and a 0600 config
// that names the monitors and that keyring, inside a new 0700 directory
// under tempDir (a host path). The key never reaches argv: rbd gets only
// --conf <path>. The caller must call remove as soon as rbd returns.
func writeCreds(fsys host.FS, tempDir string, v Volume, now time.Time) (*creds, error) {
	if err := fsys.PrivateDir(tempDir, true); err != nil {
		return nil, fmt.Errorf("temporary ceph credentials: %w", err)
	}
	fsys.SweepScratch(tempDir, credsPrefix, credsAge, now)
	s, err := fsys.NewScratch(tempDir, credsPrefix)
	if err != nil {
		return nil, fmt.Errorf("create temporary ceph credentials: %w", err)
	}
	c := &creds{Scratch: s}
	user := v.User
	if user == "" {
		user = "admin"
	}
	keyring := fmt.Sprintf("[client.%s]\n\tkey = %s\n", user, v.Key.Reveal())
	if c.KeyPath, err = s.WriteFile("keyring", keyring); err != nil {
		_ = c.remove()
		return nil, err
	}
	var conf strings.Builder
	conf.WriteString("# Written by brick for one rbd call; removed when it returns.\n[global]\n")
	if len(v.Monitors) > 0 {
		fmt.Fprintf(&conf, "\tmon host = %s\n", strings.Join(v.Monitors, ","))
	}
	fmt.Fprintf(&conf, "\tkeyring = %s\n", c.KeyPath)
	if c.ConfPath, err = s.WriteFile("ceph.conf", conf.String()); err != nil {
		_ = c.remove()
		return nil, err
	}
	return c, nil
}

// SweepCredentials removes the temporary credentials directories under
// tempDir (a host path) whose brick is gone: killed (SIGKILL, OOM, power
// cut of a container) before it could remove them. It returns the
// directories removed. Best effort: what cannot be judged stays for later.
func SweepCredentials(fsys host.FS, tempDir string, now time.Time) []string {
	return fsys.SweepScratch(tempDir, credsPrefix, credsAge, now)
}
