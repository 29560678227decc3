package fc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// FuzzListHBAs feeds arbitrary fc_host attributes and device links to the
// HBA reader and to get-connector's facts: no panic, every WWN they give
// is valid, and a name left "" has its reason.
func FuzzListHBAs(f *testing.F) {
	f.Add("Online\n", "0x10000090fa1b2c3d\n", "0x20000090fa1b2c3d\n", "../../devices/pci0000:00/0000:00:03.0/0000:05:00.3/host2/fc_host/host2")
	f.Add("", "0x", "zz", "/")
	f.Add("Linkdown", "10:00:00:90:fa:1b:2c:3d", "0x1", "../../../../x/net/eth0/ctlr_0/host2/fc_host/host2")
	root := f.TempDir()
	fsys := host.NewFS(root)
	f.Fuzz(func(t *testing.T, state, port, node, link string) {
		_ = os.RemoveAll(filepath.Join(root, "sys"))
		dir := filepath.Join(root, "sys/devices/x/host2/fc_host/host2")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"port_state": state, "port_name": port, "node_name": node} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cls := filepath.Join(root, "sys/class/fc_host")
		if err := os.MkdirAll(cls, 0o755); err != nil {
			t.Fatal(err)
		}
		_ = os.Symlink(link, filepath.Join(cls, "host2"))
		hbas, _, err := ListHBAs(fsys)
		if err != nil {
			return
		}
		for _, h := range hbas {
			for _, w := range []string{h.PortName, h.NodeName} {
				if _, err := ParseWWN(w); err != nil && w != "" {
					t.Fatalf("WWN %q: %v", w, err)
				}
			}
			if (h.PortName == "" || h.NodeName == "") != (len(h.Unreadable) > 0) {
				t.Fatalf("names %q %q, reasons %v", h.PortName, h.NodeName, h.Unreadable)
			}
		}
		var p connector.Properties
		(&Connector{h: &host.Host{FS: fsys}}).HostFacts(&p, func(string, error) {})
		for _, w := range append(p.WWPNs, p.WWNNs...) {
			if _, err := ParseWWN(w); err != nil {
				t.Fatalf("fact %q: %v", w, err)
			}
		}
	})
}
