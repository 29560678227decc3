package rbd

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDeviceList(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    []Mapping
		wantErr bool
	}{
		{name: "nothing mapped", out: "[]\n", want: []Mapping{}},
		{name: "empty output", out: "", want: nil},
		{
			name: "krbd (Mimic and later)",
			out:  `[{"id":"0","pool":"volumes","namespace":"","name":"vol1","snap":"-","device":"/dev/rbd0"},{"id":"1","pool":"volumes2","namespace":"ns1","name":"vol1","snap":"-","device":"/dev/rbd1"}]`,
			want: []Mapping{
				{ID: "0", Pool: "volumes", Image: "vol1", Snap: "-", Device: "/dev/rbd0"},
				{ID: "1", Pool: "volumes2", Namespace: "ns1", Image: "vol1", Snap: "-", Device: "/dev/rbd1"},
			},
		},
		{
			name: "rbd-nbd list-mapped (image key, numeric pid)",
			out:  `[{"id":4242,"pool":"volumes","namespace":"","image":"vol1","snap":"-","device":"/dev/nbd0"}]`,
			want: []Mapping{{ID: "4242", Pool: "volumes", Image: "vol1", Snap: "-", Device: "/dev/nbd0"}},
		},
		{
			name: "pre-Mimic object keyed by id",
			out:  `{"1":{"pool":"b","name":"vol1","snap":"-","device":"/dev/rbd1"},"0":{"pool":"a","name":"vol1","snap":"-","device":"/dev/rbd0"}}`,
			want: []Mapping{
				{ID: "0", Pool: "a", Image: "vol1", Snap: "-", Device: "/dev/rbd0"},
				{ID: "1", Pool: "b", Image: "vol1", Snap: "-", Device: "/dev/rbd1"},
			},
		},
		{name: "device outside /dev", out: `[{"pool":"a","name":"v","device":"/etc/passwd"}]`, wantErr: true},
		{name: "device with option", out: `[{"pool":"a","name":"v","device":"--force"}]`, wantErr: true},
		{name: "device dotdot", out: `[{"pool":"a","name":"v","device":"/dev/rbd0/../sda"}]`, wantErr: true},
		{name: "not json", out: "rbd: warning: something\n", wantErr: true},
		{name: "wrong shape", out: `[1,2]`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDeviceList([]byte(tt.out))
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestMappingMatches(t *testing.T) {
	v := Volume{Pool: "volumes", Image: "vol1"}
	require.True(t, Mapping{Pool: "volumes", Image: "vol1", Snap: "-"}.Matches(v))
	require.False(t, Mapping{Pool: "volumes2", Image: "vol1", Snap: "-"}.Matches(v), "same image name in another pool")
	require.False(t, Mapping{Pool: "volumes", Namespace: "ns", Image: "vol1", Snap: "-"}.Matches(v), "same image in a namespace")
	require.False(t, Mapping{Pool: "volumes", Image: "vol1", Snap: "snap1"}.Matches(v), "a snapshot of the image")
	v.Namespace = "ns"
	require.True(t, Mapping{Pool: "volumes", Namespace: "ns", Image: "vol1"}.Matches(v))
}

func FuzzParseDeviceList(f *testing.F) {
	f.Add([]byte(`[{"id":"0","pool":"volumes","namespace":"","name":"vol1","snap":"-","device":"/dev/rbd0"}]`))
	f.Add([]byte(`[{"id":12,"pool":"p","namespace":"n","image":"i","snap":"-","device":"/dev/nbd3"}]`))
	f.Add([]byte(`{"0":{"pool":"a","name":"v","snap":"-","device":"/dev/rbd0"}}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, out []byte) {
		ms, err := ParseDeviceList(out)
		if err != nil {
			return
		}
		for _, m := range ms {
			if !devicePathRE().MatchString(m.Device) {
				t.Fatalf("accepted device %q", m.Device)
			}
		}
	})
}
