package nfs

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
)

// TestDriverShapes runs connection info shaped the way Cinder's NFS-based
// drivers build it (written from each driver's documented keys and unit
// tests; values are made up).
func TestDriverShapes(t *testing.T) {
	for _, tc := range []struct {
		driver            string
		data              string
		export, name, fmt string
		options           []string
	}{
		{
			driver: "generic NFS (cinder/volume/drivers/nfs.py + remotefs.py initialize_connection, options null)",
			data:   `{"export":"192.0.2.90:/srv/cinder","name":"volume-0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11","options":null,"format":"raw","mount_point_base":"/var/lib/cinder/mnt"}`,
			export: "192.0.2.90:/srv/cinder", name: "volume-0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11", fmt: "raw",
		},
		{
			driver: "generic NFS with nfs_mount_options and a \\040 share (cinder/volume/drivers/nfs.py, nfs_shares_config)",
			data:   `{"export":"nfs-host:/export\\040this","name":"volume-1","options":"-o vers=4.1,proto=tcp","format":"qcow2"}`,
			export: "nfs-host:/export this", name: "volume-1", fmt: "qcow2", options: []string{"vers=4.1", "proto=tcp"},
		},
		{
			driver: "generic NFS, a share with a space (cinder/volume/drivers/remotefs.py _load_shares_config turns \\040 into a space, so initialize_connection's export has it raw)",
			data:   `{"export":"192.0.2.91:/srv/cinder vols","name":"volume-0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11","options":null,"format":"raw","mount_point_base":"/var/lib/cinder/mnt"}`,
			export: "192.0.2.91:/srv/cinder vols", name: "volume-0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11", fmt: "raw",
		},
		{
			driver: "NetApp ONTAP NFS (cinder/volume/drivers/netapp/dataontap/nfs_base.py, IPv6 data LIF)",
			data:   `{"export":"[2001:db8::7]:/vol_cinder","name":"volume-2","options":null,"format":"raw"}`,
			export: "[2001:db8::7]:/vol_cinder", name: "volume-2", fmt: "raw",
		},
		{
			driver: "Dell PowerStore NFS (cinder/volume/drivers/dell_emc/powerstore/nfs.py, host name)",
			data:   `{"export":"nas.example.com:/cinder-fs","name":"volume-3","options":null,"format":"raw"}`,
			export: "nas.example.com:/cinder-fs", name: "volume-3", fmt: "raw",
		},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			ci, err := connector.ParseConnectionInfo([]byte(`{"driver_volume_type":"nfs","data":` + tc.data + `}`))
			require.NoError(t, err)
			v, err := ParseVolume(ci)
			require.NoError(t, err)
			require.Equal(t, tc.export, v.Export.String())
			require.Equal(t, tc.name, v.Name)
			require.Equal(t, tc.fmt, v.Format)
			require.Equal(t, tc.options, v.Options)
		})
	}
}
