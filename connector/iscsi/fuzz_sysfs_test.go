package iscsi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brick-storage/brick/host"
)

// FuzzListSessions feeds arbitrary sysfs attribute contents (target name,
// state, address, port, the device link) to the session reader: no panic,
// and a session it returns has a port in range.
func FuzzListSessions(f *testing.F) {
	f.Add("iqn.2026-12.org.brick:t1\n", "LOGGED_IN\n", "10.0.0.1\n", "3260\n", "../../devices/platform/host2/session1")
	f.Add("", "", "::ffff:10.0.0.1", "-1", "../../x")
	f.Add("x", "FAILED", "fe80::1%eth0", "99999999999999999999", "/")
	root := f.TempDir()
	fsys := host.NewFS(root)
	f.Fuzz(func(t *testing.T, target, state, addr, port, link string) {
		sess := filepath.Join(root, "sys/class/iscsi_session/session1")
		conn := filepath.Join(root, "sys/class/iscsi_connection/connection1:0")
		_ = os.RemoveAll(filepath.Join(root, "sys"))
		for _, d := range []string{sess, conn, filepath.Join(root, "sys/devices/platform/host2/session1")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for p, v := range map[string]string{sess + "/targetname": target, sess + "/state": state, conn + "/persistent_address": addr, conn + "/persistent_port": port} {
			if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_ = os.Symlink(link, sess+"/device")
		got, err := ListSessions(fsys)
		if err != nil {
			return
		}
		for _, s := range got {
			if s.ID != 1 {
				t.Fatalf("session id %d", s.ID)
			}
			_, _ = findSession(got, s.Target, s.Portal)
		}
	})
}

// FuzzParseRecord: any node record file parses without panic, and a key it
// returns has no white space around it.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte("# BEGIN RECORD 2.1.8\nnode.name = iqn.x\nnode.session.auth.password = pw\n# END RECORD\n"))
	f.Add([]byte("=\n = \nkey=\n\x00 = \x00\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for k := range ParseRecord(data) {
			if k == "" {
				t.Fatalf("empty key from %q", data)
			}
		}
	})
}
