package scsi_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/scsi"
)

func TestKernelLUN(t *testing.T) {
	for _, tc := range []struct {
		why  string
		lun  int64
		mode string
		want int
		err  string
	}{
		{"LVM/tgtd and most drivers send no addressing_mode", 0, "", 0, ""},
		{"SAM keeps the LUN", 5, "SAM", 5, ""},
		{"transparent keeps the LUN", 300, "transparent", 300, ""},
		{"Pure FlashArray (pure.py, SAM2): peripheral below 256", 255, "SAM2", 255, ""},
		{"Pure FlashArray (pure.py, SAM2): flat space from 256", 256, "SAM2", 16640, ""},
		{"Pure FlashArray (pure.py, SAM2): top of flat space", 16383, "SAM2", 32767, ""},
		{"os-brick's docstring: SAM3-flat LUN 1", 1, "SAM3-flat", 16385, ""},
		{"os-brick's docstring: SAM3-flat LUN 256", 256, "SAM3-flat", 16640, ""},
		{"SAM at the 14-bit limit", 16383, "", 16383, ""},
		{"beyond 14 bits", 16384, "", 0, "out of range"},
		{"beyond 14 bits, SAM2", 16384, "SAM2", 0, "out of range"},
		{"negative", -1, "SAM", 0, "out of range"},
		{"huge", 1 << 40, "", 0, "out of range"},
		{"mode is case-sensitive, as in os-brick", 1, "sam", 0, "addressing_mode"},
		{"hostile mode", 1, "--help", 0, "addressing_mode"},
	} {
		got, err := scsi.KernelLUN(tc.lun, tc.mode)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.why)
			continue
		}
		require.NoError(t, err, tc.why)
		require.Equal(t, tc.want, got, tc.why)
		require.LessOrEqual(t, got, scsi.MaxKernelLUN, tc.why)
	}
}
