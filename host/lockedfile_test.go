package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/brick-storage/brick/host"
)

func TestAppendAndCommentOutLineLocked(t *testing.T) {
	root := t.TempDir()
	fsys := host.NewFS(root)
	ctx := context.Background()
	file := filepath.Join(root, "/etc/multipath/wwids")

	wrote, err := fsys.LineFile("/etc/multipath/wwids", "# header\n").Append(ctx, "/3600a/")
	require.NoError(t, err)
	require.True(t, wrote)
	wrote, err = fsys.LineFile("/etc/multipath/wwids", "# header\n").Append(ctx, "/3600a/")
	require.NoError(t, err)
	require.False(t, wrote, "a line already there is not written twice")
	require.NoError(t, os.WriteFile(file, []byte("# header\n/3600a/\n/3600b/"), 0o644))
	_, err = fsys.LineFile("/etc/multipath/wwids", "").Append(ctx, "/3600c/")
	require.NoError(t, err)
	data, _ := os.ReadFile(file)
	require.Equal(t, "# header\n/3600a/\n/3600b/\n/3600c/\n", string(data))

	changed, err := fsys.LineFile("/etc/multipath/wwids", "").CommentOut(ctx, "/3600b/")
	require.NoError(t, err)
	require.True(t, changed)
	data, _ = os.ReadFile(file)
	require.Equal(t, "# header\n/3600a/\n#3600b/\n/3600c/\n", string(data))
	changed, err = fsys.LineFile("/etc/multipath/wwids", "").CommentOut(ctx, "/3600x/")
	require.NoError(t, err)
	require.False(t, changed)
	changed, err = fsys.LineFile("/etc/none", "").CommentOut(ctx, "/3600x/")
	require.NoError(t, err, "no file: nothing to forget")
	require.False(t, changed)
}

func TestAppendLineLockedWaitsForTheLock(t *testing.T) {
	root := t.TempDir()
	fsys := host.NewFS(root)
	file := filepath.Join(root, "wwids")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	// An open file description lock conflicts with fcntl's process locks
	// even inside one process, so it stands in for multipathd holding one.
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	lock := unix.Flock_t{Type: unix.F_WRLCK}
	require.NoError(t, unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lock))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = fsys.LineFile("/wwids", "").Append(ctx, "/3600a/")
	require.ErrorIs(t, err, host.ErrWaitTimeout)

	lock.Type = unix.F_UNLCK
	require.NoError(t, unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lock))
	_, err = fsys.LineFile("/wwids", "").Append(context.Background(), "/3600a/")
	require.NoError(t, err)
}
