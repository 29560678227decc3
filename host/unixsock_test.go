package host

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDialAbstractChecksPeer: abstract sockets carry no permissions, so a
// local user can bind multipathd's name while it is down and answer "ok"
// to everything; brick talks only to a listener whose SO_PEERCRED uid it
// trusts.
func TestDialAbstractChecksPeer(t *testing.T) {
	name := fmt.Sprintf("brick-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	l, err := net.Listen("unix", "@"+name)
	require.NoError(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx := context.Background()
	me := uint32(os.Geteuid())

	conn, err := dialAbstract(ctx, name, []uint32{me})
	require.NoError(t, err, "our own listener is trusted")
	conn.Close()

	_, err = dialAbstract(ctx, "@"+name, []uint32{me + 1})
	require.ErrorIs(t, err, ErrUntrustedPeer)
	require.ErrorContains(t, err, fmt.Sprintf("connect to @%s: socket held by an untrusted process: pid %d, uid %d (not root)", name, os.Getpid(), me))

	_, err = NewSystem(NewFS(t.TempDir())).DialAbstract(ctx, name)
	require.ErrorIs(t, err, ErrFixtureRoot)
}
