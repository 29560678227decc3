package scsi_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/scsi"
)

func TestCheckNotInUse(t *testing.T) {
	h, root := hosttest.New(t, nil)
	fixtureDisk(t, root, "2:0:0:1", "sdb", "naa.60000000000000000e00000000010001")
	hosttest.WriteFile(t, root, "/sys/block/sdb/dev", "8:16\n")
	hosttest.WriteFile(t, root, "/sys/block/sdb/sdb1/dev", "8:17\n")
	hosttest.WriteFile(t, root, "/sys/block/sdb/sdb1/partition", "1\n")
	hosttest.Mkdir(t, root, "/sys/block/sdb/sdb1/holders")
	s := scsi.New(h, scsi.Options{})

	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	require.NoError(t, s.CheckNotInUse("sdb"))
	require.NoError(t, s.CheckNotInUse("sdz"), "a disk that is gone is not in use")

	// A mounted partition makes the disk busy.
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n40 22 8:17 / /srv/data rw - xfs /dev/sdb1 rw\n")
	err := s.CheckNotInUse("sdb")
	require.ErrorIs(t, err, host.ErrDeviceBusy)
	require.Contains(t, err.Error(), "/dev/sdb1 is mounted on /srv/data")

	// Something stacked on it (LVM, a map) too.
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	hosttest.Mkdir(t, root, "/sys/block/sdb/holders/dm-4")
	err = s.CheckNotInUse("sdb")
	require.ErrorIs(t, err, host.ErrDeviceBusy)
	require.Contains(t, err.Error(), "held by dm-4")

	require.Error(t, s.CheckNotInUse("../sdb"))
}
