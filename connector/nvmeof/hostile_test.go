package nvmeof

import (
	"testing"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/internal/hostile"
)

// TestHostileConnectionInfo: hostile values for every key the connector
// reads are refused by Connect, Disconnect and DevicePaths naming the key,
// before anything touches the host.
func TestHostileConnectionInfo(t *testing.T) {
	var cases []hostile.Case
	for _, key := range []string{"target_nqn", "vol_uuid", "volume_nguid", "host_nqn"} {
		cases = append(cases, hostile.Common(key)...)
	}
	cases = append(cases, hostile.Strings("target_nqn", "nqn.2014-08.a:b,traddr=1.2.3.4", "nqn.2014-08.a:b=c")...)
	for _, v := range append([]string{"-x", "1.2.3.4,trsvcid=1", "::1%lo", hostile.Huge}, hostile.Shell...) {
		cases = append(cases, hostile.Case{Name: "portal " + v[:min(len(v), 12)], Key: "portals",
			Value: []any{[]any{"10.0.0.1", 4420, "tcp"}, []any{v, 4420, "tcp"}}, WantKey: "portals[1][0]"})
		cases = append(cases, hostile.Case{Name: "transport " + v[:min(len(v), 12)], Key: "portals",
			Value: []any{[]any{"10.0.0.1", 4420, v}}, WantKey: "portals[0][2]"})
	}
	n := hostile.Check(t, newInfo(), cases, func(t *testing.T) (connector.Connector, *hosttest.Runner) {
		r := hosttest.NewRunner(nil)
		h, _ := hosttest.New(t, r)
		c := New(h, Options{})
		c.fab = refuseFabrics{t}
		return c, r
	})
	t.Logf("nvmeof: %d hostile (case, entry point) pairs refused", n)
}
