package connect

import (
	"testing"

	"github.com/brick-storage/brick/internal/view"
)

// FuzzReadDeviceInfo: any --device-info JSON document parses or fails
// without panic (inputs not starting with "{" are file names and skipped).
func FuzzReadDeviceInfo(f *testing.F) {
	f.Add(`{"path":"/dev/sdb","type":"block","protocol":"iscsi","paths":["/dev/sdb"],"extra":{"target_lun":"1"}}`)
	f.Add(`{"path":7,"extra":[]}`)
	f.Add(` {"paths":[null]} trailing`)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) == 0 || s[0] != '{' {
			return
		}
		dev, err := readDeviceInfo(s)
		if err == nil && dev == nil {
			t.Fatal("no error and no device")
		}
		if err == nil {
			_ = view.Device(dev)
		}
	})
}
