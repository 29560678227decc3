package iscsi_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDriverShapes runs connection info shaped the way Cinder's iSCSI
// drivers build it in initialize_connection (written from each driver's
// documented keys and unit tests; values are made up) through the parser.
// want lists the (portal, IQN, kernel LUN) triples brick uses, in order.
func TestDriverShapes(t *testing.T) {
	const (
		iqnA = "iqn.2010-06.com.purestorage:flasharray.12345abc"
		iqnB = "iqn.1992-08.com.netapp:sn.1234567890abcdef:vs.5"
		iqnC = "iqn.2000-05.com.3pardata:21210002ac00383d"
	)
	type triple struct {
		portal, iqn string
		lun         int
	}
	for _, tc := range []struct {
		driver string // Cinder driver and the file its dict comes from
		info   string
		want   []triple
		warn   bool
	}{
		{
			driver: "LVM with tgt (cinder/volume/targets/tgt.py via iscsi.py _get_iscsi_properties)",
			info:   `{"target_discovered":false,"target_portal":"192.0.2.10:3260","target_iqn":"` + iqn1 + `","target_lun":1,"volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11","auth_method":"CHAP","auth_username":"u","auth_password":"p4ssw0rd1234","encrypted":false}`,
			want:   []triple{{"192.0.2.10:3260", iqn1, 1}},
		},
		{
			driver: "LVM with LIO and iscsi_secondary_ip_addresses (cinder/volume/targets/iscsi.py, target_portals/iqns/luns)",
			info:   `{"target_discovered":false,"target_portal":"192.0.2.10:3260","target_iqn":"` + iqn1 + `","target_lun":0,"target_portals":["192.0.2.10:3260","198.51.100.10:3260"],"target_iqns":["` + iqn1 + `","` + iqn1 + `"],"target_luns":[0,0],"volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11","discard":true}`,
			want:   []triple{{"192.0.2.10:3260", iqn1, 0}, {"198.51.100.10:3260", iqn1, 0}},
		},
		{
			driver: "Pure FlashArray, LUN above 255 (cinder/volume/drivers/pure.py PureISCSIDriver, addressing_mode SAM2)",
			info:   `{"target_discovered":false,"discard":true,"addressing_mode":"SAM2","target_luns":[300,300],"target_iqns":["` + iqnA + `","` + iqnA + `"],"target_portals":["192.0.2.20:3260","192.0.2.21:3260"],"wwn":"3624a93701234567890abcdef00011234"}`,
			want:   []triple{{"192.0.2.20:3260", iqnA, 16684}, {"192.0.2.21:3260", iqnA, 16684}},
		},
		{
			driver: "NetApp ONTAP, IPv6 LIF (cinder/volume/drivers/netapp/utils.py get_iscsi_connection_properties brackets v6)",
			info:   `{"target_discovered":false,"target_iqn":"` + iqnB + `","target_portal":"[2001:db8::5]:3260","target_lun":5,"volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11","discard":true,"target_portals":["[2001:db8::5]:3260","[2001:db8::6]:3260"],"target_iqns":["` + iqnB + `","` + iqnB + `"],"target_luns":[5,5]}`,
			want:   []triple{{"[2001:db8::5]:3260", iqnB, 5}, {"[2001:db8::6]:3260", iqnB, 5}},
		},
		{
			driver: "HPE 3PAR/Primera (cinder/volume/drivers/hpe/hpe_3par_iscsi.py, target_discovered true, CHAP)",
			info:   `{"target_portal":"192.0.2.30:3260","target_iqn":"` + iqnC + `","target_lun":2,"target_discovered":true,"encrypted":false,"auth_method":"CHAP","auth_username":"host1","auth_password":"ch4pS3cretPw"}`,
			want:   []triple{{"192.0.2.30:3260", iqnC, 2}},
		},
		{
			driver: "IBM Storwize/SVC (cinder/volume/drivers/ibm/storwize_svc/storwize_svc_iscsi.py, LUN as a string)",
			info:   `{"target_discovered":false,"target_iqn":"iqn.1986-03.com.ibm:2145.cluster1.node1","target_portal":"192.0.2.40:3260","volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11","target_lun":"0","target_portals":["192.0.2.40:3260","192.0.2.41:3260"],"target_iqns":["iqn.1986-03.com.ibm:2145.cluster1.node1","iqn.1986-03.com.ibm:2145.cluster1.node2"],"target_luns":[0,0]}`,
			want:   []triple{{"192.0.2.40:3260", "iqn.1986-03.com.ibm:2145.cluster1.node1", 0}, {"192.0.2.41:3260", "iqn.1986-03.com.ibm:2145.cluster1.node2", 0}},
		},
		{
			driver: "Hitachi VSP (cinder/volume/drivers/hitachi/hbsd_common.py, plural keys and CHAP)",
			info:   `{"target_discovered":false,"target_iqn":"iqn.1994-04.jp.co.hitachi:rsd.h8m.i.120b47.1a.ff","target_portal":"192.0.2.50:3260","target_lun":16,"target_iqns":["iqn.1994-04.jp.co.hitachi:rsd.h8m.i.120b47.1a.ff"],"target_portals":["192.0.2.50:3260"],"target_luns":[16],"auth_method":"CHAP","auth_username":"hbsd","auth_password":"hbsdS3cret12","discard":true}`,
			want:   []triple{{"192.0.2.50:3260", "iqn.1994-04.jp.co.hitachi:rsd.h8m.i.120b47.1a.ff", 16}},
		},
		{
			driver: "Dell SC / Unity (cinder/volume/drivers/dell_emc/unity/adapter.py, singular and plural with repeated entries)",
			info:   `{"target_discovered":false,"target_iqn":"iqn.1992-04.com.emc:cx.apm00123.a0","target_portal":"192.0.2.60:3260","target_lun":3,"target_iqns":["iqn.1992-04.com.emc:cx.apm00123.a0","iqn.1992-04.com.emc:cx.apm00123.b0"],"target_portals":["192.0.2.60:3260","192.0.2.61:3260"],"target_luns":[3,3]}`,
			want:   []triple{{"192.0.2.60:3260", "iqn.1992-04.com.emc:cx.apm00123.a0", 3}, {"192.0.2.61:3260", "iqn.1992-04.com.emc:cx.apm00123.b0", 3}},
		},
		{
			driver: "Synology without secondary IPs (cinder/volume/drivers/synology/synology_common.py, no target_lun)",
			info:   `{"target_discovered":false,"target_iqn":"iqn.2000-01.com.synology:ds.volume-1","target_portal":"192.0.2.70:3260","volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11","access_mode":"rw","discard":false}`,
			want:   []triple{{"192.0.2.70:3260", "iqn.2000-01.com.synology:ds.volume-1", 0}},
		},
		{
			driver: "Infinidat InfiniBox (cinder/volume/drivers/infinidat.py, a portal per network space IP)",
			info:   `{"target_discovered":true,"target_iqn":"iqn.2009-11.com.infinidat:storage:infinibox-sn-1234","target_portal":"192.0.2.80:3260","target_lun":7,"target_iqns":["iqn.2009-11.com.infinidat:storage:infinibox-sn-1234","iqn.2009-11.com.infinidat:storage:infinibox-sn-1234"],"target_portals":["192.0.2.80:3260","192.0.2.81:3260"],"target_luns":[7,7]}`,
			want:   []triple{{"192.0.2.80:3260", "iqn.2009-11.com.infinidat:storage:infinibox-sn-1234", 7}, {"192.0.2.81:3260", "iqn.2009-11.com.infinidat:storage:infinibox-sn-1234", 7}},
		},
		{
			driver: "TOYOU TYDS (cinder/volume/drivers/toyou/tyds/tyds.py initialize_connection: target_portal and the lists, no target_iqn)",
			info:   `{"target_discovered":false,"target_portal":"192.0.2.95:3260","target_lun":4,"target_iqns":["iqn.2023-06.com.toyou:tyds.target1","iqn.2023-06.com.toyou:tyds.target1"],"target_portals":["192.0.2.95:3260","192.0.2.96:3260"],"target_luns":[4,4]}`,
			want:   []triple{{"192.0.2.95:3260", "iqn.2023-06.com.toyou:tyds.target1", 4}, {"192.0.2.96:3260", "iqn.2023-06.com.toyou:tyds.target1", 4}},
		},
		{
			driver: "unbracketed IPv6 portal with the port (seen from drivers that format ip:port without brackets)",
			info:   `{"target_iqn":"` + iqn1 + `","target_portal":"fd00::1:3260","target_lun":1}`,
			want:   []triple{{"[fd00::1:3260]:3260", iqn1, 1}},
			warn:   true,
		},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			info, err := parse(t, `{"driver_volume_type":"iscsi","data":`+tc.info+`}`)
			require.NoError(t, err)
			var got []triple
			for _, tg := range info.Targets {
				got = append(got, triple{tg.Portal.String(), tg.IQN, tg.LUN})
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.warn, len(info.Warnings) > 0)
		})
	}
}
