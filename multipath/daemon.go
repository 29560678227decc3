package multipath

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// Multipathd sends multipathd its commands: over its socket, else
// through the multipathd command.
type Multipathd struct {
	*deps
}

// Running reports whether multipathd runs on the host (from /proc;
// no command is run).
func (d Multipathd) Running() bool { return d.sys.ProcessRunning("multipathd") }

// gone reports that multipathd is known not to run: /proc shows
// processes (PID 1 at least) and none of them is multipathd.
func (d Multipathd) gone() bool {
	return d.fs.Exists("/proc/1") && !d.Running()
}

// AddPath tells multipathd about a path (multipathd add path /dev/sdX): the
// udev event for the disk may have reached multipathd before its WWID was
// added, and then multipathd ignored it.
func (d Multipathd) AddPath(ctx context.Context, disk string) error {
	disk = strings.TrimPrefix(disk, "/dev/")
	if !ident.DiskName(disk) {
		return fmt.Errorf("multipathd add path %q: not a disk name", disk)
	}
	out, err := d.command(ctx, "add", "path", "/dev/"+disk)
	if err != nil {
		return fmt.Errorf("multipathd add path %s: %w", disk, err)
	}
	// multipathd reports failures on stdout with exit code 0 in some versions.
	if out != "" && out != "ok" {
		return fmt.Errorf("multipathd add path %s: %s", disk, ident.Clip(out, 200))
	}
	return nil
}

// DelPath makes multipathd drop a path (multipathd del path sdX). A path it
// does not know is success.
func (d Multipathd) DelPath(ctx context.Context, disk string) error {
	disk = strings.TrimPrefix(disk, "/dev/")
	if !ident.DiskName(disk) {
		return fmt.Errorf("multipathd del path %q: not a disk name", disk)
	}
	if _, err := d.command(ctx, "del", "path", disk); err != nil {
		return fmt.Errorf("multipathd del path %s: %w", disk, err)
	}
	return nil
}

// DisableQueueing makes the map fail I/O instead of queueing it while no
// path is usable, so a forced flush cannot hang on dead paths.
func (d Multipathd) DisableQueueing(ctx context.Context, mp *Map) error {
	if _, err := d.command(ctx, "disablequeueing", "map", mp.Name); err != nil {
		return fmt.Errorf("multipathd disablequeueing %s: %w", mp.Name, err)
	}
	return nil
}

// Daemon sends one command to multipathd ("add path sdb") and returns its
// reply ("ok", "fail", ...) without the trailing newline. An error wrapping
// ErrNoSocket means the command never reached multipathd: the caller then
// runs the multipathd command instead.
type Daemon interface {
	Command(ctx context.Context, cmd string) (string, error)
}

// ErrNoSocket means multipathd's socket could not be reached.
var ErrNoSocket = errors.New("multipathd socket not reachable")

// SocketName is multipathd's abstract socket (multipath-tools'
// DEFAULT_SOCKET), what the multipathd command itself connects to.
const SocketName = "@/org/kernel/linux/storage/multipathd"

// maxReply bounds a reply read from the socket; "show" commands on a big
// host stay far below it, and brick sends none of them.
const maxReply = 1 << 20

// socketDaemon talks multipath-tools' libmpathcmd protocol: each message is
// its length as a native-endian size_t (the terminating NUL counted), then
// the bytes with that NUL. One connection per command, as the multipathd
// client does; it saves a process start per command.
type socketDaemon struct {
	sys     host.System
	timeout time.Duration
}

func (d socketDaemon) Command(ctx context.Context, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	conn, err := d.sys.DialAbstract(ctx, SocketName)
	if errors.Is(err, host.ErrUntrustedPeer) {
		// Not "no socket": the multipathd command would ask the same impostor.
		return "", fmt.Errorf("multipathd %s: %w", cmd, err)
	}
	if err != nil {
		return "", fmt.Errorf("multipathd %s: %w: %w", cmd, ErrNoSocket, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(dl); err != nil {
			return "", fmt.Errorf("multipathd %s: %w", cmd, err)
		}
	}
	if err := writeFrame(conn, cmd); err != nil {
		return "", fmt.Errorf("multipathd %s: send: %w", cmd, err)
	}
	reply, err := readFrame(conn)
	if err != nil {
		return "", fmt.Errorf("multipathd %s: reply: %w", cmd, err)
	}
	return reply, nil
}

func writeFrame(w io.Writer, msg string) error {
	buf := make([]byte, 8, 8+len(msg)+1)
	binary.NativeEndian.PutUint64(buf, uint64(len(msg)+1))
	buf = append(append(buf, msg...), 0)
	_, err := w.Write(buf)
	return err
}

// readFrame reads one message and returns it without its NUL and trailing
// white space.
func readFrame(r io.Reader) (string, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return "", err
	}
	n := binary.NativeEndian.Uint64(hdr[:])
	if n > maxReply {
		return "", fmt.Errorf("reply of %d bytes is over the %d byte limit", n, maxReply)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return "", err
	}
	return strings.TrimRight(string(body), "\x00 \t\r\n"), nil
}

// command sends args (the multipathd command's words) over the socket and
// falls back to running "multipathd args..." when the socket cannot be
// reached. A reply of "fail" (multipathd's word for a refused command,
// which makes the multipathd command exit 1) is an error.
func (d Multipathd) command(ctx context.Context, args ...string) (string, error) {
	cmd := strings.Join(args, " ")
	reply, err := d.opts.Daemon.Command(ctx, cmd)
	if errors.Is(err, ErrNoSocket) {
		d.log.Debug("multipathd socket unusable; running the command", "err", err.Error())
		res, err := d.run(ctx, "multipathd", args...)
		if err != nil {
			return "", err
		}
		reply = strings.TrimSpace(string(res.Stdout))
		if reply == "fail" {
			return reply, fmt.Errorf("multipathd %s: fail", cmd)
		}
		return reply, nil
	}
	if err != nil {
		return "", err
	}
	d.log.Debug("multipathd (socket)", "command", cmd, "reply", ident.Clip(reply, 200))
	if reply == "fail" || strings.HasPrefix(reply, "permission deny") || strings.HasPrefix(reply, "timeout") {
		return reply, fmt.Errorf("multipathd %s: %s", cmd, ident.Clip(reply, 200))
	}
	return reply, nil
}
