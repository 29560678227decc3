package nfs

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// loops sets up and detaches the loop devices brick puts over volume
// files, each checked against the file the kernel says backs it.
type loops struct {
	h       *host.Host
	timeout time.Duration
}

// backs reports whether dev is set up over file.
func (l loops) backs(dev, file string) bool { return l.isBacking(l.backing(dev), file) }

var loopDevRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/dev/loop[0-9]{1,6}$`) })

// attach sets up a loop device over the volume file with direct I/O,
// so writes through the device go to the server rather than sitting twice
// in the page cache, and checks that the kernel backs it with our file.
func (l loops) attach(ctx context.Context, file string, readOnly bool) (string, error) {
	args := []string{"--find", "--show", "--direct-io=on"}
	if readOnly {
		args = append(args, "--read-only")
	}
	args = append(args, l.h.FS.Path(file))
	res, err := l.h.Runner.Run(ctx, host.Command{Name: "losetup", Args: args, Timeout: l.timeout})
	if err != nil {
		return "", fmt.Errorf("nfs loop device over %s: %w", file, err)
	}
	dev := strings.TrimSpace(string(res.Stdout))
	if !loopDevRE().MatchString(dev) {
		return "", fmt.Errorf("nfs loop device over %s: losetup printed %s, not a loop device", file, connector.Quote(dev))
	}
	if b := l.backing(dev); !l.isBacking(b, file) {
		_ = l.detachDevice(ctx, dev)
		return "", fmt.Errorf("nfs loop device over %s: %s is backed by %s", file, dev, connector.Quote(b))
	}
	l.h.Log.Info("nfs: loop device", "file", file, "device", dev)
	return dev, nil
}

// detach detaches dev if it still backs file; a device now backing
// something else (the number was reused) is left alone.
func (l loops) detach(ctx context.Context, dev, file string) error {
	b := l.backing(dev)
	if b == "" {
		return nil // already detached
	}
	if !l.isBacking(b, file) {
		l.h.Log.Warn("nfs: loop device now backs another file; leaving it", "device", dev, "backing", b)
		return nil
	}
	return l.detachDevice(ctx, dev)
}

func (l loops) detachDevice(ctx context.Context, dev string) error {
	_, err := l.h.Runner.Run(ctx, host.Command{Name: "losetup", Args: []string{"--detach", dev}, Timeout: l.timeout})
	if err != nil {
		if l.backing(dev) == "" {
			return nil // gone meanwhile
		}
		return fmt.Errorf("nfs detach loop device %s: %w", dev, err)
	}
	return nil
}

// backing returns the file behind a loop device, "" when the device is
// not set up (or does not exist).
func (l loops) backing(dev string) string {
	s, err := l.h.FS.ReadString("/sys/block/" + filepath.Base(dev) + "/loop/backing_file")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(s, " (deleted)")
}

// isBacking reports whether backing (as the kernel reports it) is file.
func (l loops) isBacking(backing, file string) bool {
	return backing != "" && (backing == file || backing == l.h.FS.Path(file))
}

// size reads the loop device's size in bytes.
func (l loops) size(loop string) (int64, error) {
	n, err := l.h.Block.Size(filepath.Base(loop))
	if err != nil {
		return 0, fmt.Errorf("nfs extend: %w", err)
	}
	return n, nil
}
