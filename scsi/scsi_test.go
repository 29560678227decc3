package scsi_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/scsi"
)

// fixtureDisk lays out what the kernel shows for one SCSI disk.
func fixtureDisk(t *testing.T, root, hctl, name, wwid string) {
	t.Helper()
	dev := "/sys/devices/platform/host2/session1/target2:0:0/" + hctl
	hosttest.Mkdir(t, root, dev+"/block/"+name+"/holders")
	hosttest.WriteFile(t, root, dev+"/block/"+name+"/size", "2048\n")
	hosttest.WriteFile(t, root, dev+"/block/"+name+"/ro", "0\n")
	hosttest.WriteFile(t, root, dev+"/delete", "")
	if wwid != "" {
		hosttest.WriteFile(t, root, dev+"/wwid", wwid+"\n")
	}
	hosttest.Symlink(t, root, "/sys/class/scsi_device/"+hctl+"/device", "../../../devices/platform/host2/session1/target2:0:0/"+hctl)
	hosttest.Symlink(t, root, "/sys/block/"+name, "../devices/platform/host2/session1/target2:0:0/"+hctl+"/block/"+name)
	hosttest.Symlink(t, root, dev+"/block/"+name+"/device", "../../../"+hctl)
	hosttest.WriteFile(t, root, "/dev/"+name, "")
}

func TestParseHCTL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want scsi.HCTL
		ok   bool
	}{
		{"2:0:0:1", scsi.HCTL{2, 0, 0, 1}, true},
		{"10:3:7:16383", scsi.HCTL{10, 3, 7, 16383}, true},
		{"2:0:0", scsi.HCTL{}, false},
		{"2:0:0:-1", scsi.HCTL{}, false},
		{"a:0:0:1", scsi.HCTL{}, false},
		{"2:0:0:1\n", scsi.HCTL{}, false},
	} {
		got, err := scsi.ParseHCTL(tc.in)
		if !tc.ok {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got)
		require.Equal(t, tc.in, got.String())
	}
}

func TestScanWritesOneLUN(t *testing.T) {
	h, root := hosttest.New(t, nil)
	hosttest.WriteFile(t, root, "/sys/class/scsi_host/host2/scan", "")
	s := scsi.New(h, scsi.Options{})
	require.NoError(t, s.Scan(context.Background(), scsi.HCTL{Host: 2, Channel: scsi.Wildcard, Target: scsi.Wildcard, LUN: 7}))
	b, _ := os.ReadFile(filepath.Join(root, "/sys/class/scsi_host/host2/scan"))
	require.Equal(t, "- - 7", string(b))
	require.NoError(t, s.Scan(context.Background(), scsi.HCTL{Host: 2, Channel: 0, Target: 0, LUN: 1}))
	b, _ = os.ReadFile(filepath.Join(root, "/sys/class/scsi_host/host2/scan"))
	require.Equal(t, "0 0 1", string(b))
	require.Error(t, s.Scan(context.Background(), scsi.HCTL{Host: 3, LUN: 1}), "no such host")
	// A flat-space LUN (SAM2 LUN 256) is a kernel LUN above MaxLUN.
	require.NoError(t, s.Scan(context.Background(), scsi.HCTL{Host: 2, LUN: 16640}))
	b, _ = os.ReadFile(filepath.Join(root, "/sys/class/scsi_host/host2/scan"))
	require.Equal(t, "0 0 16640", string(b))
	require.Error(t, s.Scan(context.Background(), scsi.HCTL{Host: 2, LUN: scsi.MaxKernelLUN + 1}))
}

func TestFindWaitWWIDDelete(t *testing.T) {
	h, root := hosttest.New(t, nil)
	fixtureDisk(t, root, "2:0:0:1", "sdb", "naa.60000000000000000e00000000010001")
	s := scsi.New(h, scsi.Options{DeviceTimeout: 200 * time.Millisecond, GoneTimeout: 200 * time.Millisecond})
	ctx := context.Background()

	name, err := s.BlockDevice(scsi.HCTL{2, 0, 0, 1})
	require.NoError(t, err)
	require.Equal(t, "sdb", name)
	names, err := s.Find(scsi.HCTL{Host: 2, Channel: scsi.Wildcard, Target: scsi.Wildcard, LUN: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"sdb"}, names)
	_, err = s.BlockDevice(scsi.HCTL{2, 0, 0, 2})
	require.ErrorIs(t, err, scsi.ErrNotFound)

	got, err := s.WaitForDevice(ctx, scsi.HCTL{2, 0, 0, 1})
	require.NoError(t, err)
	require.Equal(t, "sdb", got)
	_, err = s.WaitForDevice(ctx, scsi.HCTL{2, 0, 0, 2})
	require.ErrorIs(t, err, host.ErrWaitTimeout)

	a, err := s.HCTLOf("sdb")
	require.NoError(t, err)
	require.Equal(t, scsi.HCTL{2, 0, 0, 1}, a)

	wwid, err := s.WWID("sdb")
	require.NoError(t, err)
	require.Equal(t, "360000000000000000e00000000010001", wwid)

	size, err := h.Block.Size("sdb")
	require.NoError(t, err)
	require.Equal(t, int64(2048*512), size)

	holders, err := s.Holders("sdb")
	require.NoError(t, err)
	require.Empty(t, holders)

	// Delete writes "1"; the fixture "kernel" then removes the device.
	require.NoError(t, s.Delete(ctx, "sdb"))
	b, _ := os.ReadFile(filepath.Join(root, "/sys/devices/platform/host2/session1/target2:0:0/2:0:0:1/delete"))
	require.Equal(t, "1", string(b))
	require.ErrorIs(t, s.WaitGone(ctx, "sdb"), host.ErrWaitTimeout)
	go func() {
		require.NoError(t, os.RemoveAll(filepath.Join(root, "/sys/devices/platform/host2/session1/target2:0:0/2:0:0:1")))
		require.NoError(t, os.Remove(filepath.Join(root, "/sys/block/sdb")))
		require.NoError(t, os.Remove(filepath.Join(root, "/dev/sdb")))
	}()
	s2 := scsi.New(h, scsi.Options{GoneTimeout: 5 * time.Second})
	require.NoError(t, s2.WaitGone(ctx, "sdb"))
	// Already gone is success.
	require.NoError(t, s.Delete(ctx, "sdb"))
	require.False(t, s.Exists("sdb"))
}

func TestNamesRejected(t *testing.T) {
	h, _ := hosttest.New(t, nil)
	s := scsi.New(h, scsi.Options{})
	for _, bad := range []string{"", "../sda", "sd b", "-sdb", "SDB", "sdb/..", "/dev/../sdb"} {
		_, err := s.WWID(bad)
		require.Error(t, err, bad)
		require.Error(t, s.Delete(context.Background(), bad), bad)
		_, err = scsi.DiskName(bad)
		require.Error(t, err, bad)
	}
	n, err := scsi.DiskName("/dev/sdc")
	require.NoError(t, err)
	require.Equal(t, "sdc", n)
	_, err = s.WWID("sdz")
	require.True(t, errors.Is(err, scsi.ErrNotFound), err)
}
