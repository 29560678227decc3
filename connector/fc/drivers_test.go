package fc_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDriverShapes runs connection info shaped the way Cinder's Fibre
// Channel drivers build it in initialize_connection (written from each
// driver's documented keys and unit tests; values are made up).
func TestDriverShapes(t *testing.T) {
	type pair struct {
		wwpn string
		lun  int
	}
	for _, tc := range []struct {
		driver string
		info   string
		want   []pair
		itMap  bool
	}{
		{
			driver: "Pure FlashArray FC, LUN above 255 (cinder/volume/drivers/pure.py PureFCDriver, addressing_mode SAM2)",
			info:   `{"target_discovered":true,"target_lun":300,"target_luns":[300,300],"target_wwn":["` + tgtA + `","` + tgtB + `"],"initiator_target_map":{"` + iniA + `":["` + tgtA + `","` + tgtB + `"]},"addressing_mode":"SAM2","discard":true}`,
			want:   []pair{{tgtA, 16684}, {tgtB, 16684}},
			itMap:  true,
		},
		{
			driver: "HPE 3PAR FC (cinder/volume/drivers/hpe/hpe_3par_fc.py, WWNs in upper case)",
			info:   `{"target_lun":1,"target_discovered":true,"target_wwn":["500601609020318D","500601689020318D"],"initiator_target_map":{"10000090FA1B2C01":["500601609020318D"],"10000090FA1B2C02":["500601689020318D"]},"encrypted":false}`,
			want:   []pair{{tgtA, 1}, {tgtB, 1}},
			itMap:  true,
		},
		{
			driver: "IBM Storwize/SVC FC (cinder/volume/drivers/ibm/storwize_svc/storwize_svc_fc.py, volume_id and LUN 0)",
			info:   `{"target_discovered":false,"target_lun":0,"volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11","target_wwn":["` + tgtA + `"],"initiator_target_map":{"` + iniA + `":["` + tgtA + `"]}}`,
			want:   []pair{{tgtA, 0}},
			itMap:  true,
		},
		{
			driver: "NetApp ONTAP FC (cinder/volume/drivers/netapp/dataontap/fc_library.py, map naming a port not in target_wwn)",
			info:   `{"target_discovered":true,"target_lun":4,"target_wwn":["` + tgtA + `"],"initiator_target_map":{"` + iniA + `":["` + tgtA + `","` + tgtB + `"]},"discard":true}`,
			want:   []pair{{tgtA, 4}},
			itMap:  true,
		},
		{
			driver: "Dell Unity FC (cinder/volume/drivers/dell_emc/unity/adapter.py, a single WWN string and target_luns)",
			info:   `{"target_discovered":true,"target_wwn":"` + tgtA + `","target_lun":2,"target_luns":[2]}`,
			want:   []pair{{tgtA, 2}},
		},
		{
			driver: "Hitachi VSP FC (cinder/volume/drivers/hitachi/hbsd_fc.py, target_wwns and a LUN per port)",
			info:   `{"target_discovered":false,"target_wwns":["` + tgtA + `","` + tgtB + `"],"target_luns":[16,16],"target_lun":16,"initiator_target_map":{"` + iniA + `":["` + tgtA + `"],"` + iniB + `":["` + tgtB + `"]},"volume_id":"0b9e5a55-3f6b-4d1e-9b58-6f9f1e2f0a11"}`,
			want:   []pair{{tgtA, 16}, {tgtB, 16}},
			itMap:  true,
		},
	} {
		t.Run(tc.driver, func(t *testing.T) {
			info, err := parse(t, `{"driver_volume_type":"fibre_channel","data":`+tc.info+`}`)
			require.NoError(t, err)
			var got []pair
			for _, tg := range info.Targets {
				got = append(got, pair{tg.WWPN, tg.LUN})
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.itMap, info.InitiatorTargetMap != nil)
		})
	}
}
