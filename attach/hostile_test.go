package attach

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/connector/rbd"
)

// TestAttachHostileConnectionInfo: connection info that Cinder returns is
// hostile input to local-attach as a whole: an unknown or malformed
// driver_volume_type and bad keys for each real protocol are refused (the
// error names the key or the type), no command runs on the host, and the
// Cinder side is rolled back (volume available, no record).
func TestAttachHostileConnectionInfo(t *testing.T) {
	iqn := "iqn.2010-10.org.openstack:volume-" + volID
	for _, tc := range []struct {
		name string
		info map[string]any
		is   error
		want string
	}{
		{"unknown type", map[string]any{"driver_volume_type": "vmdk"}, connector.ErrUnsupported, `"vmdk"`},
		{"shell in type", map[string]any{"driver_volume_type": "iscsi;reboot"}, connector.ErrInvalid, `"driver_volume_type"`},
		{"path in type", map[string]any{"driver_volume_type": "../../iscsi"}, connector.ErrInvalid, `"driver_volume_type"`},
		{"type not a string", map[string]any{"driver_volume_type": 7}, connector.ErrInvalid, `"driver_volume_type"`},
		{"type missing", map[string]any{"target_iqn": iqn}, connector.ErrInvalid, `"driver_volume_type"`},
		{"iscsi portal injection", map[string]any{"driver_volume_type": "iscsi", "target_portal": "10.0.0.1:3260 -o delete", "target_iqn": iqn, "target_lun": 1}, connector.ErrInvalid, `"target_portal"`},
		{"iscsi iqn path", map[string]any{"driver_volume_type": "iscsi", "target_portal": "10.0.0.1:3260", "target_iqn": "../../etc", "target_lun": 1}, connector.ErrInvalid, `"target_iqn"`},
		{"iscsi chap newline", map[string]any{"driver_volume_type": "iscsi", "target_portal": "10.0.0.1:3260", "target_iqn": iqn, "target_lun": 1,
			"auth_method": "CHAP", "auth_username": "u", "auth_password": "pw\nnode.startup = automatic"}, connector.ErrInvalid, `"auth_password"`},
		{"fc wwn shell", map[string]any{"driver_volume_type": "fibre_channel", "target_wwn": "$(reboot)", "target_lun": 1}, connector.ErrInvalid, `"target_wwn[0]"`},
		{"rbd name traversal", map[string]any{"driver_volume_type": "rbd", "name": "../../etc/passwd", "hosts": []any{"10.0.0.1"}, "ports": []any{"6789"}}, connector.ErrInvalid, `"name"`},
		{"rbd monitor option", map[string]any{"driver_volume_type": "rbd", "name": "volumes/v", "hosts": []any{"-m"}, "ports": []any{"6789"}}, connector.ErrInvalid, `"hosts[0]"`},
		{"nfs export option", map[string]any{"driver_volume_type": "nfs", "export": "-o exec:/srv", "name": "v"}, connector.ErrInvalid, `"export"`},
		{"nfs suid", map[string]any{"driver_volume_type": "nfs", "export": "10.0.0.1:/srv", "name": "v", "options": "-o suid,dev"}, connector.ErrInvalid, `"options"`},
		{"nfs name absolute", map[string]any{"driver_volume_type": "nfs", "export": "10.0.0.1:/srv", "name": "/etc/shadow"}, connector.ErrInvalid, `"name"`},
	} {
		for _, mv := range []string{"", "3.0"} {
			t.Run(tc.name+"/mv="+mv, func(t *testing.T) {
				f := newFixture(t, mv)
				f.fake.ConnectionInfo = func(string, map[string]any) map[string]any { return tc.info }
				m := f.manager()
				reg := connector.NewRegistry()
				reg.Register(iscsi.New(f.host, iscsi.Options{}), "iscsi")
				reg.Register(fc.New(f.host, fc.Options{}), "fibre_channel", "fc")
				reg.Register(rbd.New(f.host, rbd.Options{TempDir: t.TempDir()}), "rbd")
				reg.Register(nfs.New(f.host, nfs.Options{}), "nfs")
				m.Connectors = reg
				_, err := m.Attach(context.Background(), AttachOptions{Volume: "data"})
				require.Error(t, err)
				require.True(t, errors.Is(err, tc.is), "%v", err)
				require.Contains(t, err.Error(), tc.want)
				require.NotContains(t, err.Error(), "\n")
				require.Empty(t, f.runner.Calls(), "no command runs for hostile connection info")
				f.requireClean()
			})
		}
	}
}
