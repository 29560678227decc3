package nvmeof

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host/hosttest"
)

const gib = int64(1) << 30

func TestExtend(t *testing.T) {
	const (
		withHead = iota // nvme1's path node grows with the head
		lags            // it still shows the old size when Extend first looks
		never           // it never grows
	)
	cases := []struct {
		name     string
		newSize  int64 // what Cinder reports; 0 for --local-only
		grows    bool  // the kernel shows 2 GiB once Extend has read the old size
		deadCtrl bool  // nvme1 is reconnecting
		path1    int   // how nvme1's path node follows the head
		want     int64
		wantErr  string
	}{
		{name: "both paths rescanned", newSize: 2 * gib, grows: true, want: 2 * gib},
		{name: "local-only waits for the change", grows: true, want: 2 * gib},
		{name: "local-only, already at size", want: gib},
		{name: "one path reconnecting", newSize: 2 * gib, grows: true, deadCtrl: true, path1: never, want: 2 * gib},
		{name: "waits for a lagging path", newSize: 2 * gib, grows: true, path1: lags, want: 2 * gib},
		{name: "local-only waits for a lagging path", grows: true, path1: lags, want: 2 * gib},
		{name: "a path never grows", newSize: 2 * gib, grows: true, path1: never, wantErr: "path nvme0c1n1 shows 1073741824 bytes, the device 2147483648"},
		{name: "never grows", newSize: 2 * gib, wantErr: "the device shows 1073741824 bytes after the rescan, the volume has 2147483648"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Every wait below ends on the fake's state; the short bounds
			// are waited out only where nothing is to change.
			r := newRigWith(t, Options{DeviceTimeout: 100 * time.Millisecond, SettleTimeout: 50 * time.Millisecond})
			_, p1 := listener(t)
			_, p2 := listener(t)
			info := infoFor(t, uuidA, p1, p2)
			dev, err := r.c.Connect(context.Background(), info)
			require.NoError(t, err)
			sectors := func(b int64) string { return fmt.Sprint(b / 512) }
			pathFile := func(ct int) string { return fmt.Sprintf("/sys/class/nvme/nvme%d/nvme0c%dn1/size", ct, ct) }
			hosttest.WriteFile(t, r.root, "/sys/block/nvme0n1/size", sectors(gib))
			hosttest.WriteFile(t, r.root, pathFile(0), sectors(gib))
			hosttest.WriteFile(t, r.root, pathFile(1), sectors(gib))
			for _, ct := range []string{"nvme0", "nvme1"} {
				hosttest.WriteFile(t, r.root, "/sys/class/nvme/"+ct+"/rescan_controller", "")
			}
			if tc.deadCtrl {
				hosttest.WriteFile(t, r.root, "/sys/class/nvme/nvme1/state", "connecting\n")
			}
			if tc.grows {
				// The head grows once Extend has read its old size; the
				// path nodes are read only after it.
				hosttest.ChangeAfterRead(t, r.root, "/sys/block/nvme0n1/size", sectors(gib), sectors(2*gib))
				hosttest.WriteFile(t, r.root, pathFile(0), sectors(2*gib))
				switch tc.path1 {
				case withHead:
					hosttest.WriteFile(t, r.root, pathFile(1), sectors(2*gib))
				case lags:
					hosttest.ChangeAfterRead(t, r.root, pathFile(1), sectors(gib), sectors(2*gib))
				}
			}

			rs, err := r.c.Extend(context.Background(), info, dev, tc.newSize)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, &connector.Resize{Device: "/dev/nvme0n1", OldSize: gib, NewSize: tc.want}, rs)
			if tc.path1 == lags {
				b, err := os.ReadFile(filepath.Join(r.root, "/sys/class/nvme/nvme1/nvme0c1n1/size"))
				require.NoError(t, err)
				require.Equal(t, fmt.Sprint(2*gib/512), strings.TrimSpace(string(b)), "returned before every path grew")
			}
			for ct, want := range map[string]string{"nvme0": "1", "nvme1": map[bool]string{true: "", false: "1"}[tc.deadCtrl]} {
				b, err := os.ReadFile(filepath.Join(r.root, "/sys/class/nvme", ct, "rescan_controller"))
				require.NoError(t, err)
				require.Equal(t, want, string(b), ct)
			}
		})
	}
}

func TestExtendRefuses(t *testing.T) {
	r := newRig(t)
	_, p1 := listener(t)
	info := infoFor(t, uuidA, p1)
	_, err := r.c.Extend(context.Background(), info, nil, 2*gib)
	require.ErrorContains(t, err, "namespace uuid "+uuidA+" is not attached")

	dev, err := r.c.Connect(context.Background(), info)
	require.NoError(t, err)
	hosttest.WriteFile(t, r.root, "/sys/block/nvme0n1/size", "2097152")
	_, err = r.c.Extend(context.Background(), info, &connector.Device{Path: "/dev/nvme0n2"}, 2*gib)
	require.ErrorContains(t, err, "the namespace is /dev/nvme0n1, not /dev/nvme0n2 as recorded")

	hosttest.WriteFile(t, r.root, "/sys/class/nvme/nvme0/state", "connecting\n")
	_, err = r.c.Extend(context.Background(), info, dev, 2*gib)
	require.ErrorContains(t, err, "no live controller to rescan (every path is down)")
}
