package cinderapi

import (
	"testing"

	"github.com/brick-storage/brick/connector"
)

// FuzzExtract feeds arbitrary response bodies to every Cinder result
// decoder: no panic, and connection info that decodes is normalised.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`{"volume":{"id":"x","status":"available","attachments":[{"attachment_id":"a"}]}}`))
	f.Add([]byte(`{"connection_info":{"driver_volume_type":"iscsi","data":{"target_lun":1}}}`))
	f.Add([]byte(`{"attachment":{"id":"a","connection_info":{"driver_volume_type":"rbd","name":"p/i"}}}`))
	f.Add([]byte(`{"attachments":[{"id":"a"}],"volumes":[{}],"versions":[{"id":"v3.0","version":"3.70","min_version":"3.0","status":"CURRENT"}]}`))
	f.Add([]byte(`{"connection_info":{"connection_info":7}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := rawResult{raw: body}
		_, _ = VolumeResult{r}.Extract()
		_, _ = VolumesResult{r}.Extract()
		if ci, err := (ConnectionResult{r}).Extract(); err == nil {
			if ci.DriverVolumeType == "" {
				t.Fatalf("connection info without a type from %q", body)
			}
			_ = ci.Redacted()
			_, _ = connector.ParseConnectionInfo(body)
		}
		if a, err := (AttachmentResult{r}).Extract(); err == nil && a.HasConnection() {
			_, _ = a.Info()
		}
		_, _ = AttachmentsResult{r}.Extract()
		_, _ = VersionsResult{r}.Extract()
		_ = ShortMessage(body)
	})
}
