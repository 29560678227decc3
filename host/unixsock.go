package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrFixtureRoot means a daemon's abstract socket was asked for on an FS
// rooted elsewhere than "/": an abstract socket lives in the network
// namespace, not in the tree, so a test's fixture host must never reach
// the real machine's daemons through it.
var ErrFixtureRoot = errors.New("abstract unix sockets are reachable only on the real root")

// ErrUntrustedPeer means the process listening on a daemon's socket is not
// root (nor brick's own user): abstract sockets have no permissions, so
// any local user may bind a daemon's name while the daemon is down.
var ErrUntrustedPeer = errors.New("socket held by an untrusted process")

// DialAbstract connects to the abstract unix stream socket name (given with
// or without its leading "@"), bounded by ctx, and checks with SO_PEERCRED
// that root (or brick's own user) listens there (ErrUntrustedPeer). Talking
// to a daemon's socket saves the process start of its client command
// (0.3-6 s under qemu TCG). It refuses on an FS that is not the real root
// (ErrFixtureRoot).
func (s System) DialAbstract(ctx context.Context, name string) (net.Conn, error) {
	if s.fs.Root() != "/" {
		return nil, fmt.Errorf("connect to @%s: %w", strings.TrimPrefix(name, "@"), ErrFixtureRoot)
	}
	return dialAbstract(ctx, name, []uint32{0, uint32(os.Geteuid())})
}

func dialAbstract(ctx context.Context, name string, trusted []uint32) (net.Conn, error) {
	name = strings.TrimPrefix(name, "@")
	var d net.Dialer
	// Go's "@" prefix selects the abstract namespace.
	conn, err := d.DialContext(ctx, "unix", "@"+name)
	if err != nil {
		return nil, fmt.Errorf("connect to @%s: %w", name, err)
	}
	cred, err := peerCred(conn)
	if err == nil && !slices.Contains(trusted, cred.Uid) {
		err = fmt.Errorf("%w: pid %d, uid %d (not root)", ErrUntrustedPeer, cred.Pid, cred.Uid)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("connect to @%s: %w", name, err)
	}
	return conn, nil
}

// peerCred is the listening process's credentials (SO_PEERCRED).
func peerCred(conn net.Conn) (*unix.Ucred, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	if cerr != nil {
		return nil, fmt.Errorf("peer credentials: %w", cerr)
	}
	return cred, nil
}
