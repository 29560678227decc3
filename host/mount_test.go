package host

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const sampleMountInfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
36 22 0:31 / /var/lib/brick/mnt/ab\040cd rw,relatime shared:20 - nfs4 10.0.0.1:/export\040dir rw,vers=4.2
40 22 252:0 / /mnt/vol rw - xfs /dev/mapper/3600a0b80 rw
`

func TestParseMountInfo(t *testing.T) {
	mounts, err := ParseMountInfo([]byte(sampleMountInfo))
	require.NoError(t, err)
	require.Len(t, mounts, 3)
	require.Equal(t, Mount{MajorMinor: "8:1", Root: "/", MountPoint: "/", FSType: "ext4", Source: "/dev/sda1", Options: "rw,errors=remount-ro"}, mounts[0])
	require.Equal(t, "/var/lib/brick/mnt/ab cd", mounts[1].MountPoint)
	require.Equal(t, "10.0.0.1:/export dir", mounts[1].Source)
	require.Equal(t, "nfs4", mounts[1].FSType)

	_, err = ParseMountInfo([]byte("1 2 3\n"))
	require.Error(t, err)
}

func FuzzParseMountInfo(f *testing.F) {
	f.Add([]byte(sampleMountInfo))
	f.Add([]byte(`1 2 0:1 / /a\ rw - x y`))
	f.Fuzz(func(t *testing.T, data []byte) {
		mounts, err := ParseMountInfo(data)
		if err != nil {
			return
		}
		for _, m := range mounts {
			if m.FSType == "" {
				t.Fatalf("mount without fs type: %+v", m)
			}
		}
	})
}
