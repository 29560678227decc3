package rbd

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
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

const gib = int64(1) << 30

// newExtendConnector is newTestConnector whose rbd also answers `rbd info`
// with imageSize.
func newExtendConnector(t *testing.T, driver string, imageSize int64) (*Connector, *hosttest.Runner, string) {
	t.Helper()
	f := &fakeCeph{t: t}
	r := hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "rbd" && hosttest.Arg(t, cmd, 0) == "info" {
			return host.Result{Stdout: []byte(fmt.Sprintf(`{"name":"x","size":%d,"objects":256,"order":22}`, imageSize))}, nil
		}
		return f.run(ctx, cmd)
	})
	h, root := hosttest.New(t, r)
	f.root = root
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	hosttest.Mkdir(t, root, "/dev")
	hosttest.WriteFile(t, root, "/proc/321/comm", "systemd-udevd\n")
	return New(h, Options{Driver: driver, DeviceTimeout: 100 * time.Millisecond}), r, root
}

func setSize(t *testing.T, root, dev string, bytes int64) {
	hosttest.WriteFile(t, root, sizeFile(dev), fmt.Sprint(bytes/512))
}

func sizeFile(dev string) string { return "/sys/block/" + strings.TrimPrefix(dev, "/dev/") + "/size" }

func TestExtend(t *testing.T) {
	cases := []struct {
		name    string
		driver  string
		newSize int64 // what Cinder reports; 0 for --local-only
		image   int64 // what rbd info reports
		grows   bool  // the device shows the new size after a while
		wantErr string
	}{
		{name: "krbd", driver: DriverKRBD, newSize: 2 * gib, grows: true},
		{name: "nbd", driver: DriverNBD, newSize: 2 * gib, grows: true},
		{name: "krbd local-only asks Ceph", driver: DriverKRBD, image: 2 * gib, grows: true},
		{name: "nbd local-only asks Ceph", driver: DriverNBD, image: 2 * gib, grows: true},
		{name: "device never grows", driver: DriverNBD, newSize: 2 * gib, wantErr: "/dev/nbd0 shows 1073741824 bytes, the image has 2147483648"},
		{name: "already at size", driver: DriverKRBD, newSize: gib},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, r, root := newExtendConnector(t, tc.driver, tc.image)
			info := cinderInfo(t, nil)
			dev, err := c.Connect(context.Background(), info)
			require.NoError(t, err)
			setSize(t, root, dev.Path, gib)
			hosttest.WriteFile(t, root, "/sys/bus/rbd/devices/0/refresh", "")
			if tc.grows {
				// The device grows once Extend has read its old size.
				hosttest.ChangeAfterRead(t, root, sizeFile(dev.Path), fmt.Sprint(gib/512), fmt.Sprint(2*gib/512))
			}

			rs, err := c.Extend(context.Background(), info, dev, tc.newSize)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			want := max(tc.newSize, tc.image)
			require.Equal(t, &connector.Resize{Device: dev.Path, OldSize: gib, NewSize: want}, rs)
			refresh, err := os.ReadFile(filepath.Join(root, "/sys/bus/rbd/devices/0/refresh"))
			require.NoError(t, err)
			require.Equal(t, map[bool]string{true: "1", false: ""}[tc.driver == DriverKRBD], string(refresh), "krbd re-reads the header")
			info0 := strings.Join(r.Calls(), "\n")
			require.Equal(t, tc.newSize == 0, strings.Contains(info0, "rbd info --format json --cluster ceph -m 192.0.2.10:6789,192.0.2.11:6789 --id cinder volumes/volume-"), info0)
		})
	}
}

func TestExtendRefusesWhatIsNotMapped(t *testing.T) {
	c, _, root := newExtendConnector(t, DriverKRBD, 0)
	info := cinderInfo(t, nil)
	_, err := c.Extend(context.Background(), info, nil, 2*gib)
	require.ErrorContains(t, err, "the image is not mapped (krbd)")

	dev, err := c.Connect(context.Background(), info)
	require.NoError(t, err)
	setSize(t, root, dev.Path, gib)
	_, err = c.Extend(context.Background(), info, &connector.Device{Path: "/dev/rbd7", Extra: dev.Extra}, 2*gib)
	require.ErrorContains(t, err, "mapped at /dev/rbd0, not at /dev/rbd7 as recorded")
}

func TestParseImageSize(t *testing.T) {
	cases := []struct {
		out     string
		want    int64
		wantErr string
	}{
		{out: `{"name":"volume-1","size":2147483648,"objects":512}`, want: 2 * gib},
		{out: `{"name":"volume-1"}`, wantErr: "no valid size"},
		{out: `{"size":-1}`, wantErr: "no valid size"},
		{out: `{"size":"2G"}`, wantErr: "not JSON"},
		{out: `rbd: error opening image`, wantErr: "not JSON"},
	}
	for _, tc := range cases {
		got, err := parseImageSize([]byte(tc.out))
		if tc.wantErr != "" {
			require.ErrorContains(t, err, tc.wantErr, tc.out)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

func FuzzParseImageSize(f *testing.F) {
	f.Add([]byte(`{"size":1073741824}`))
	f.Add([]byte(`{"size":null}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		n, err := parseImageSize(out)
		if err == nil && n <= 0 {
			t.Fatalf("size %d accepted", n)
		}
	})
}

// TestMaskedKeyringFromARecord: a record holds the connection info masked;
// extend (and detach) read it without the key rather than refusing it.
func TestMaskedKeyringFromARecord(t *testing.T) {
	info := cinderInfo(t, func(d map[string]any) { d["keyring"] = testKeyring })
	v, err := ParseVolume(info.Redacted())
	require.NoError(t, err)
	require.True(t, v.Key.IsZero())
	require.Contains(t, v.Ignored, "keyring: masked (a stored record); the host's keyring is used")
}
