package multipath

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUdevClaimsPath(t *testing.T) {
	tests := []struct {
		db   string
		want bool
	}{
		{"", false},
		{"E:DM_MULTIPATH_DEVICE_PATH=1\n", true},
		{"S:disk/by-id/x\nE:DM_MULTIPATH_DEVICE_PATH=1\nE:FIND_MULTIPATHS_WAIT_UNTIL=0\n", true},
		{"E:DM_MULTIPATH_DEVICE_PATH=0\n", false},
		{"E:DM_MULTIPATH_DEVICE_PATH=2\n", false},
		{"E:DM_MULTIPATH_DEVICE_PATH=1\nE:FIND_MULTIPATHS_WAIT_UNTIL=1765000000\n", false},
		{"E:DM_MULTIPATH_DEVICE_PATH=10\n", false},
		{"X:DM_MULTIPATH_DEVICE_PATH=1\n", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, udevClaimsPath(tt.db), "%q", tt.db)
	}
}

// FuzzUdevClaimsPath: any udev database entry is judged without a panic,
// and a claim always carries the key.
func FuzzUdevClaimsPath(f *testing.F) {
	f.Add("E:DM_MULTIPATH_DEVICE_PATH=1\n")
	f.Add("E:DM_MULTIPATH_DEVICE_PATH=1\nE:FIND_MULTIPATHS_WAIT_UNTIL=17\n")
	f.Add("\x00\nE:\n=1")
	f.Fuzz(func(t *testing.T, db string) {
		if udevClaimsPath(db) && !strings.Contains(db, "E:DM_MULTIPATH_DEVICE_PATH=1") {
			t.Fatalf("claimed without the key: %q", db)
		}
	})
}
