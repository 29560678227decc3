package nvmeof

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCorpusDifferences: connection info real drivers send that brick
// once refused and os-brick attaches.
func TestCorpusDifferences(t *testing.T) {
	ctx := context.Background()
	_, p := listener(t)
	portal := []any{[]any{"127.0.0.1", p, "tcp"}}

	// A vol_uuid of 32 hex digits without dashes: the array's NGUID in
	// the UUID's place, as os-brick's NVMeOFConnProps accepts it ("with or
	// without hyphens"; KIOXIA KumoScale's replicas, cinder/volume/drivers/
	// kioxia/kumoscale.py, pass the array's own volume id there). Matched by
	// the namespace's UUID, or by its NGUID.
	t.Run("vol_uuid without dashes (KumoScale-style array id)", func(t *testing.T) {
		r := newRig(t)
		dev, err := r.c.Connect(ctx, build(t, newInfo(), map[string]any{"vol_uuid": "BBBBBBBB000040008000000000000002", "ns_id": nil, "volume_nguid": nil, "portals": portal}))
		require.NoError(t, err)
		require.Equal(t, "/dev/nvme0n2", dev.Path, "the namespace whose UUID is those 128 bits")
		r = newRig(t)
		dev, err = r.c.Connect(ctx, build(t, newInfo(), map[string]any{"vol_uuid": testNGID, "ns_id": nil, "volume_nguid": nil, "portals": portal}))
		require.NoError(t, err)
		require.Equal(t, "/dev/nvme0n1", dev.Path, "the namespace whose NGUID is those 32 digits")
	})

	// Old-format info with no ns_id, volume_nguid or vol_uuid (Cinder's
	// first NVMe-oF targets, cinder/volume/targets/nvmeof.py before
	// ns_id, and os-brick's "devices_on_start" fallback for them): the
	// subsystem's only namespace is the volume; with several brick refuses
	// rather than guess.
	old := func(port int) map[string]any {
		m := oldInfo()
		m["target_portal"], m["target_port"], m["ns_id"] = "127.0.0.1", port, nil
		return m
	}
	t.Run("old format without any namespace id", func(t *testing.T) {
		r := newRig(t)
		r.k.nss[testNQN] = r.k.nss[testNQN][1:]
		dev, err := r.c.Connect(ctx, build(t, old(p), nil))
		require.NoError(t, err)
		require.Equal(t, "/dev/nvme0n1", dev.Path)

		r = newRig(t)
		_, err = r.c.Connect(ctx, build(t, old(p), nil))
		require.ErrorIs(t, err, ErrAmbiguousNamespace)
		require.ErrorContains(t, err, "nvme0n1, nvme0n2")
		entries, _ := os.ReadDir(filepath.Join(r.root, "/sys/class/nvme"))
		require.Empty(t, entries, "the controllers of the refused connect are gone")
	})
}
