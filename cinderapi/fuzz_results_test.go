package cinderapi

import (
	"encoding/json"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/attachments"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"

	"github.com/brick-storage/brick/connector"
)

// FuzzExtract feeds arbitrary response bodies through gophercloud's
// results into brick's normalisation: no panic, and connection info that
// decodes is normalised.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`{"volume":{"id":"x","status":"available","attachments":[{"attachment_id":"a"}]}}`))
	f.Add([]byte(`{"connection_info":{"driver_volume_type":"iscsi","data":{"target_lun":1}}}`))
	f.Add([]byte(`{"attachment":{"id":"a","connection_info":{"driver_volume_type":"rbd","name":"p/i"}}}`))
	f.Add([]byte(`{"attachments":[{"id":"a"}],"volumes":[{}],"versions":[{"id":"v3.0","version":"3.70","min_version":"3.0","status":"CURRENT"}]}`))
	f.Add([]byte(`{"connection_info":{"connection_info":7}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var b any
		if json.Unmarshal(body, &b) != nil {
			return
		}
		var vr volumes.GetResult
		vr.Body = b
		if v, err := vr.Extract(); err == nil {
			_ = newestAttachment(v, "h")
		}
		var ir volumes.InitializeConnectionResult
		ir.Body = b
		if raw, err := ir.Extract(); err == nil {
			if ci, err := connector.FromMap(raw); err == nil {
				if ci.DriverVolumeType == "" {
					t.Fatalf("connection info without a type from %q", body)
				}
				_ = ci.Redacted()
			}
		}
		var ar attachments.GetResult
		ar.Body = b
		a, err := ar.Extract()
		if ci, err := attachmentInfo("attachment show", "v", a, err); err == nil && ci.DriverVolumeType == "" {
			t.Fatalf("connection info without a type from %q", body)
		}
		_ = ShortMessage(body)
	})
}
