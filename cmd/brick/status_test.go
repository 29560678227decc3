package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// openPTY returns a pseudo-terminal's two ends: what brick writes to the
// second (its stderr) is read from the first, as a terminal would show it.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	require.NoError(t, unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	require.NoError(t, err)
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 100}))
	return master, tty
}

// screen is what a terminal (or a pipe) shows, and lets a fake wait until
// some text has been shown: the test moves on events, not on the clock.
type screen struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed at each write
}

func newScreen() *screen { return &screen{changed: make(chan struct{})} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor returns once re matches what was shown, or when ctx ends.
func (s *screen) waitFor(ctx context.Context, re *regexp.Regexp) {
	for {
		s.mu.Lock()
		seen, changed := re.Match(s.buf.Bytes()), s.changed
		s.mu.Unlock()
		if seen {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// onTerminal gives a pseudo-terminal to write to and the screen that
// shows what was written; done closes the terminal and waits for the
// screen to have it all.
func onTerminal(t *testing.T) (tty *os.File, sc *screen, done func()) {
	master, tty := openPTY(t)
	sc = newScreen()
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(sc, master) // ends with EIO once the tty is closed
		close(copied)
	}()
	return tty, sc, func() { tty.Close(); <-copied }
}

// TestStatusLine runs local-attach with stderr on a pseudo-terminal while
// another process holds the volume's lock and the iSCSI login is slow: the
// user is told at once who holds the lock, and one status line redrawn in
// place shows the step, the volume and the elapsed time, then is erased.
// With stderr a pipe, or -f json, no status line is drawn.
func TestStatusLine(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	const id = "11111111-1111-4111-8111-111111111111"
	fake := cindertest.New(t)
	fake.AddVolume(id, "data")
	waiting := "brick: waiting for brick pid 1 attaching data"
	// The status line during the login, once a second has passed.
	connectLine := regexp.MustCompile(`\r\x1b\[Kbrick: local-attach data: connect( \([^)]*\))? [1-9]\d*s`)
	// attach runs local-attach with stderr going to sc (through w). The
	// lock is released once the wait is shown; with slowLogin, each login
	// lasts until the status line shows it with the elapsed time (or the
	// login times out); fakeTools (secrets_test.go) then refuses it.
	attach := func(t *testing.T, w io.Writer, sc *screen, slowLogin bool, extra ...string) string {
		root := fixtureHost(t)
		held, err := host.New(root, nil, nil).Locks.Lock(t.Context(), "volume-"+id)
		require.NoError(t, err)
		// The holder line of another process (a lock this process holds
		// itself is not announced).
		lockFile := filepath.Join(root, host.LockDir, "volume-"+id+".lock")
		require.NoError(t, os.WriteFile(lockFile, []byte("1 brick local-attach data\n"), 0o600))
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		go func() { sc.waitFor(ctx, regexp.MustCompile(regexp.QuoteMeta(waiting))); held() }()
		tools := &fakeTools{t: t, root: root}
		var out bytes.Buffer
		a := newApp(&out, w)
		a.runner = hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
			if slowLogin && cmd.Name == "iscsiadm" && strings.HasSuffix(strings.Join(cmd.Args, " "), "--login") {
				sc.waitFor(ctx, connectLine)
			}
			return tools.run(ctx, cmd)
		})
		args := append([]string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth",
			"--cinder-endpoint", fake.Endpoint(), "local-attach", "data", "--iscsi-login-timeout", "10s"}, extra...)
		code := runApp(t.Context(), a, args)
		require.Equal(t, 1, code, "the logins fail")
		return out.String()
	}

	t.Run("terminal", func(t *testing.T) {
		tty, sc, done := onTerminal(t)
		attach(t, tty, sc, true)
		done()
		s := sc.String()
		t.Logf("%q", s)
		require.Contains(t, s, waiting, "the lock holder is named")
		require.Contains(t, s, "\r\x1b[Kbrick: local-attach data: authenticating at "+fake.Endpoint(), "the line starts at authentication")
		require.Contains(t, s, "\r\x1b[Kbrick: local-attach data: (waiting for brick pid", "the status line shows the wait")
		require.Regexp(t, connectLine, s, "step, volume and elapsed time")
		last := s[strings.LastIndex(s, "\r\x1b[K")+len("\r\x1b[K"):]
		require.Regexp(t, `^brick: local-attach data: connect: iscsi connect: [^\r]*\r\n$`, last, "erased, then the error alone")
		for _, l := range strings.Split(s, "\n") {
			require.LessOrEqual(t, len([]rune(l[strings.LastIndex(l, "\r")+1:])), 100, "never wider than the terminal: %q", l)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		sc := newScreen()
		attach(t, sc, sc, false)
		require.Contains(t, sc.String(), waiting)
		require.NotContains(t, sc.String(), "\x1b[K")
	})
	t.Run("json on a terminal", func(t *testing.T) {
		tty, sc, done := onTerminal(t)
		attach(t, tty, sc, false, "-f", "json")
		done()
		require.Contains(t, sc.String(), waiting)
		require.NotContains(t, sc.String(), "\x1b[K")
	})
	t.Run("verbose", func(t *testing.T) {
		sc := newScreen()
		attach(t, sc, sc, false, "-v")
		for _, step := range []string{"authenticating at " + fake.Endpoint(), "reserve", "export", "connect"} {
			require.Contains(t, sc.String(), "brick: local-attach data: "+step+" (at ")
		}
		require.NotContains(t, sc.String(), "\x1b[K")
		require.NotContains(t, sc.String(), "argv=", "no --debug trace")
	})
}

// TestReconcileStatus: reconcile and restore report their steps like
// local-attach does (-v here, the live line on a terminal).
func TestReconcileStatus(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	fake := cindertest.New(t)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"reconcile", "--apply"}, []string{"brick: reconcile: check (at ", "brick: reconcile: apply (at "}},
		{[]string{"reconcile"}, []string{"brick: reconcile: check (at "}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			root := fixtureHost(t)
			hosttest.WriteFile(t, root, "/proc/self/mountinfo", "")
			var out, errb bytes.Buffer
			a := newApp(&out, &errb)
			a.runner = hosttest.NewRunner(func(context.Context, host.Command) (host.Result, error) {
				return host.Result{}, fmt.Errorf("no commands in this test")
			})
			args := append([]string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth",
				"--cinder-endpoint", fake.Endpoint(), "-v"}, tt.args...)
			code := runApp(t.Context(), a, args)
			require.Equal(t, 0, code, errb.String())
			for _, w := range tt.want {
				require.Contains(t, errb.String(), w)
			}
			if len(tt.want) == 1 {
				require.NotContains(t, errb.String(), "apply (at ")
			}
		})
	}
}

// TestWholeCommandTimeout: --timeout ends a local-attach stuck in an iSCSI
// login well before the login's own limit, says so, and the attach is
// undone as after any failure.
func TestWholeCommandTimeout(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	const id = "11111111-1111-4111-8111-111111111111"
	fake := cindertest.New(t)
	fake.AddVolume(id, "data")
	root := fixtureHost(t)
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "")
	tools := &fakeTools{t: t, root: root}
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	a.runner = hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "iscsiadm" && strings.HasSuffix(strings.Join(cmd.Args, " "), "--login") {
			<-ctx.Done() // a portal that never answers
			return host.Result{}, fmt.Errorf("iscsiadm --login: %w", ctx.Err())
		}
		return tools.run(ctx, cmd)
	})
	start := time.Now()
	code := runApp(t.Context(), a, []string{"--host-root", root, "--config", "/dev/null", "--os-auth-type", "noauth",
		"--cinder-endpoint", fake.Endpoint(), "--timeout", "1s", "local-attach", "data", "--iscsi-login-timeout", "30s"})
	require.Equal(t, 1, code, errb.String())
	require.Less(t, time.Since(start), 10*time.Second, "the whole-command limit, not the login's")
	require.Contains(t, errb.String(), "(--timeout 1s reached)")
	status, attachments := fake.Status(id)
	require.Equal(t, "available", status, "the attach was undone")
	require.Zero(t, attachments)
	require.Zero(t, fake.Exports())
}

// TestDescribeHolder: the lock holder host records, in the words the user
// is shown.
func TestDescribeHolder(t *testing.T) {
	tests := []struct{ in, want string }{
		{"brick pid 4242 (brick local-attach data)", "brick pid 4242 attaching data"},
		{"brick pid 7 (brick local-detach 0b7d1f2e-0000-4000-8000-000000000001)", "brick pid 7 detaching 0b7d1f2e-0000-4000-8000-000000000001"},
		{"brick pid 7 (brick cleanup)", "brick pid 7 cleaning up"},
		{"brick pid 9 (brick extend data)", "brick pid 9 extending data"},
		{"brick pid 9 (brick list)", "brick pid 9 (brick list)"},
		{"another brick process", "another brick process"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, describeHolder(tt.in), tt.in)
	}
}

// The holder line comes from the parsed command, so flags before the
// subcommand (and their values) neither hide the volume nor leak.
func TestLockDoing(t *testing.T) {
	var got string
	a := newApp(io.Discard, io.Discard)
	root := a.rootCommand(nil)
	for _, c := range root.Commands() {
		if c.Name() == "list" {
			c.RunE = func(cmd *cobra.Command, args []string) error { got = lockDoing(cmd, args); return nil }
		}
	}
	root.SetArgs([]string{"--config", "/dev/null", "--os-password", "s3cret", "list"})
	require.NoError(t, root.Execute())
	require.Equal(t, "brick list", got)
	require.Equal(t, "brick", lockDoing(root, nil))
}
