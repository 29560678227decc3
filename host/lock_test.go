package host

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A lock directory (or run directory) that is a symlink, too open or
// someone else's is refused, naming it and the fix.
func TestLockDirRefusesPlantedDirectory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dir string)
		want  string
	}{
		{"symlink", func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(t.TempDir(), dir))
		}, "not a directory"},
		{"world-writable", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chmod(dir, 0o777))
		}, "mode 0777"},
		{"other owner", func(t *testing.T, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the directory away")
			}
			require.NoError(t, os.Mkdir(dir, 0o700))
			require.NoError(t, os.Chown(dir, 65534, 65534))
		}, "owned by uid 65534"},
	} {
		for _, planted := range []string{RunDir, LockDir} {
			t.Run(tc.name+" "+planted, func(t *testing.T) {
				root := t.TempDir()
				dir := filepath.Join(root, planted)
				require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o700))
				tc.plant(t, dir)
				_, err := NewLocks(NewFS(root)).Lock(context.Background(), "vol")
				require.ErrorContains(t, err, tc.want)
				require.ErrorContains(t, err, planted)
				require.ErrorContains(t, err, "remove")
			})
		}
	}

	t.Run("created 0700", func(t *testing.T) {
		root := t.TempDir()
		u, err := NewLocks(NewFS(root)).Lock(context.Background(), "vol")
		require.NoError(t, err)
		u()
		for _, d := range []string{RunDir, LockDir} {
			st, err := os.Lstat(filepath.Join(root, d))
			require.NoError(t, err)
			require.True(t, st.IsDir())
			require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
		}
	})
}

// Any user may create directories in world-writable /run/lock, as
// "mkdir /run/lock/brick" or an unprivileged "brick connect" did: brick's
// locks must not care, so no user can block a root attach or detach.
func TestLockIgnoresUserOwnedRunLock(t *testing.T) {
	root := t.TempDir()
	runLock := filepath.Join(root, "run/lock")
	require.NoError(t, os.MkdirAll(runLock, 0o755))
	require.NoError(t, os.Chmod(runLock, 0o1777))
	planted := filepath.Join(runLock, "brick")
	require.NoError(t, os.Mkdir(planted, 0o777))
	require.NoError(t, os.Chmod(planted, 0o777))
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chown(planted, 65534, 65534))
	}
	u, err := NewLocks(NewFS(root)).Lock(context.Background(), "volume-1")
	require.NoError(t, err)
	u()
	require.NotContains(t, filepath.Clean(LockDir), "/run/lock")
	entries, err := os.ReadDir(planted)
	require.NoError(t, err)
	require.Empty(t, entries, "no lock file in the user's directory")
}

// A symlink planted as a lock file must not make brick create the file
// it points to.
func TestLockRefusesSymlinkedLockFile(t *testing.T) {
	root := t.TempDir()
	l := NewLocks(NewFS(root))
	u, err := l.Lock(context.Background(), "first") // creates the directory
	require.NoError(t, err)
	u()
	victim := filepath.Join(t.TempDir(), "nologin")
	require.NoError(t, os.Symlink(victim, filepath.Join(root, LockDir, "vol.lock")))
	_, err = l.Lock(context.Background(), "vol")
	require.Error(t, err)
	require.NoFileExists(t, victim)
}

// A wait without deadline ends by itself, naming the holder.
func TestLockWaitIsBoundedAndNamesHolder(t *testing.T) {
	root := t.TempDir()
	l := NewLocks(NewFS(root))
	held, err := l.Lock(context.Background(), "vol")
	require.NoError(t, err)
	defer held()
	l.wait = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := l.Lock(context.Background(), "vol")
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
		require.ErrorContains(t, err, "waiting for another task of this brick process (")
		require.ErrorContains(t, err, filepath.Base(os.Args[0]))
	case <-time.After(10 * time.Second):
		t.Fatal("a lock wait without deadline never ended")
	}
	require.Equal(t, 10*time.Minute, DefaultLockWait)
}

func itoa(n int) string { return strconv.Itoa(n) }

// A holder records what it does; those waiting hear of another process
// at once, never of this one's own tasks.
func TestLockHolderLine(t *testing.T) {
	root := t.TempDir()
	l := NewLocks(NewFS(root))
	l.Doing = "brick local-attach data"
	var heard []string
	l.Waiting = func(name, holder string) { heard = append(heard, name+": "+holder) }
	held, err := l.Lock(context.Background(), "vol")
	require.NoError(t, err)
	file := filepath.Join(root, LockDir, "vol.lock")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, itoa(os.Getpid())+" brick local-attach data\n", string(b))

	l.wait = 50 * time.Millisecond
	_, err = l.Lock(context.Background(), "vol")
	require.ErrorContains(t, err, "another task of this brick process (brick local-attach data)")
	require.Empty(t, heard, "a lock of this process is not announced")

	require.NoError(t, os.WriteFile(file, []byte("1 brick extend data\x1b\n"), 0o600))
	_, err = l.Lock(context.Background(), "vol")
	require.ErrorContains(t, err, "waiting for brick pid 1 (brick extend data?)")
	require.Equal(t, []string{"vol: brick pid 1 (brick extend data?)"}, heard)
	held()
}
