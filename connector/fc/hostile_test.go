package fc_test

import (
	"testing"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/internal/hostile"
)

// TestHostileConnectionInfo feeds hostile values for every key the FC
// connector reads to Connect, Disconnect and DevicePaths: each is refused
// naming the key and nothing runs (no scan, no multipath, no blockdev).
func TestHostileConnectionInfo(t *testing.T) {
	const tw = "50014380186af83c"
	base := map[string]any{
		"driver_volume_type": "fibre_channel",
		"target_wwn":         []any{tw, "50014380186af83e"},
		"target_lun":         1,
		"volume_id":          "11111111-1111-4111-8111-111111111111",
		"access_mode":        "rw",
	}
	var cases []hostile.Case
	for _, v := range append(append([]string{"x\x00y", hostile.Huge, "-o", "../../../sys", "/sys/class/fc_host", "0x" + tw + "0", "5001438018" + "6af83g"}, hostile.Shell...), tw+";reboot") {
		cases = append(cases, hostile.Case{Name: "target_wwn " + v[:min(len(v), 16)], Key: "target_wwn", Value: []any{tw, v}, WantKey: "target_wwn[1]"})
	}
	cases = append(cases, hostile.Strings("target_wwn", 42, true, map[string]any{"a": tw}, []any{42})...)
	cases = append(cases,
		hostile.Case{Name: "target_wwns bad", Key: "target_wwns", Value: []any{"$(reboot)"}, WantKey: "target_wwns[0]"},
		hostile.Case{Name: "target_wwns type", Key: "target_wwns", Value: 5},
	)
	cases = append(cases, hostile.Strings("target_lun", -1, 1<<40, "1;reboot", "-1", 1.5, true, "x", map[string]any{}, []any{1, 2, 3})...)
	cases = append(cases, hostile.Strings("target_luns", []any{-1}, []any{"x"}, "1;reboot")...)
	cases = append(cases, hostile.Strings("initiator_target_map", "x", []any{}, 5,
		map[string]any{"../../etc": []any{tw}},
		map[string]any{"$(reboot)": []any{tw}},
		map[string]any{"10000090fa0d6754": []any{"-x"}},
		map[string]any{"10000090fa0d6754": 5},
		map[string]any{"10000090fa0d6754": []any{tw + "\x00"}},
	)...)
	cases = append(cases, hostile.Strings("addressing_mode", "SAM;reboot", "-x", 5, hostile.Huge)...)
	cases = append(cases, hostile.Strings("access_mode", "rw;reboot", "-rw", 1)...)
	// volume_id is ignored when unreadable: see TestParseInfoIgnoresUnusedKeys.
	cases = append(cases, hostile.Strings("enable_wildcard_scan", "yes", 1)...)
	cases = append(cases, hostile.Strings("encrypted", "maybe")...)
	cases = append(cases, hostile.Strings("driver_volume_type", "iscsi")...)

	n := hostile.Check(t, base, cases, func(t *testing.T) (connector.Connector, *hosttest.Runner) {
		r := hosttest.NewRunner(nil)
		h, _ := hosttest.New(t, r)
		return fc.New(h, fc.Options{}), r
	})
	t.Logf("fc: %d hostile (case, entry point) pairs refused, 0 commands run", n)
}
