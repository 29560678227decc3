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

func TestClaimsEveryPath(t *testing.T) {
	tests := []struct {
		conf string
		want bool
	}{
		{"", false},
		{"defaults {\n\tfind_multipaths greedy\n}\n", true},
		{"defaults { find_multipaths \"greedy\" }", true},
		{"defaults {\n    find_multipaths no\n}\n", true},
		{"defaults {\n\tfind_multipaths strict\n}\n", false},
		{"defaults {\n\tfind_multipaths yes\n\tuser_friendly_names no\n}\n", false},
		{"# find_multipaths greedy\n", false},
		{"defaults {\n\t! find_multipaths greedy\n}\n", false},
		{"defaults { user_friendly_names no }\n", false},
		{"find_multipaths\ngreedy\n", false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, claimsEveryPath(tt.conf), "%q", tt.conf)
	}
}

// FuzzClaimsEveryPath: any configuration text is judged without a panic,
// and a claim always names the keyword.
func FuzzClaimsEveryPath(f *testing.F) {
	f.Add("defaults {\n\tfind_multipaths greedy\n}\n")
	f.Add("defaults { find_multipaths \"no\" } # x")
	f.Add("\x00{}\"!#find_multipaths")
	f.Fuzz(func(t *testing.T, conf string) {
		if claimsEveryPath(conf) && !strings.Contains(conf, "find_multipaths") {
			t.Fatalf("claimed without the keyword: %q", conf)
		}
	})
}
