package iscsi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/iscsi"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// benchSessions lays out sessions 1..len(luns) (SCSI host N = session N),
// session N logged in to iqns[N-1] at 127.0.0.1:3260 and showing luns[N-1]
// LUNs, as the kernel does after a scan, and returns a connector over it
// that logs nothing.
func benchSessions(b *testing.B, iqns []string, luns []int) (*iscsi.Connector, host.FS) {
	b.Helper()
	root := b.TempDir()
	disk := 0
	for i, n := range luns {
		id := i + 1
		sess := fmt.Sprintf("/sys/devices/platform/host%d/session%d", id, id)
		cls := fmt.Sprintf("/sys/class/iscsi_session/session%d", id)
		hosttest.Mkdir(b, root, sess)
		hosttest.WriteFile(b, root, cls+"/targetname", iqns[i]+"\n")
		hosttest.WriteFile(b, root, cls+"/state", "LOGGED_IN\n")
		hosttest.Symlink(b, root, cls+"/device", "../../.."+strings.TrimPrefix(sess, "/sys"))
		conn := fmt.Sprintf("/sys/class/iscsi_connection/connection%d:0", id)
		hosttest.WriteFile(b, root, conn+"/persistent_address", "127.0.0.1\n")
		hosttest.WriteFile(b, root, conn+"/persistent_port", "3260\n")
		for lun := 0; lun < n; lun++ {
			name := fmt.Sprintf("sdx%d", disk)
			disk++
			hctl := fmt.Sprintf("%d:0:0:%d", id, lun)
			dev := fmt.Sprintf("%s/target%d:0:0/%s", sess, id, hctl)
			hosttest.Mkdir(b, root, dev+"/block/"+name+"/holders")
			hosttest.WriteFile(b, root, dev+"/wwid", fmt.Sprintf("naa.60000000000000000e000000%08x\n", disk))
			hosttest.Symlink(b, root, dev+"/block/"+name+"/device", "../../../"+hctl)
			hosttest.Symlink(b, root, "/sys/block/"+name, ".."+strings.TrimPrefix(dev, "/sys")+"/block/"+name)
		}
	}
	h := hosttest.NewQuiet(root)
	return iscsi.New(h, iscsi.Options{}), h.FS
}

// BenchmarkDevicePaths1000 times finding one volume's devices (what
// disconnect and local-detach look up first: sessions, then the session's
// disks of the LUN, then a map over them) with 1,000 SCSI disks on the host:
// spread over ten targets, or all behind one target (an array exporting
// every volume as a LUN of one IQN).
func BenchmarkDevicePaths1000(b *testing.B) {
	for _, tc := range []struct {
		name  string
		iqns  []string
		luns  []int
		iqn   string
		lun   int
		disks int
	}{
		{"TenTargets", benchIQNs(10), repeatInt(100, 10), benchIQN(5), 50, 1},
		{"OneTarget", benchIQNs(1), []int{1000}, benchIQN(0), 500, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, _ := benchSessions(b, tc.iqns, tc.luns)
			ci, err := connector.ParseConnectionInfo(fmt.Appendf(nil, `{"driver_volume_type":"iscsi","data":{"target_portal":"127.0.0.1:3260","target_iqn":%q,"target_lun":%d}}`, tc.iqn, tc.lun))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				paths, err := c.DevicePaths(ctx, ci)
				if err != nil || len(paths) != tc.disks {
					b.Fatal(paths, err)
				}
			}
		})
	}
}

// BenchmarkListSessions64 times reading 64 sessions from sysfs (every
// connect reads them twice).
func BenchmarkListSessions64(b *testing.B) {
	_, fsys := benchSessions(b, benchIQNs(64), repeatInt(0, 64))
	b.ReportAllocs()
	for b.Loop() {
		if s, err := iscsi.ListSessions(fsys); err != nil || len(s) != 64 {
			b.Fatal(len(s), err)
		}
	}
}

func benchIQN(i int) string { return fmt.Sprintf("iqn.2026-12.org.brick:bench%d", i) }

func benchIQNs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = benchIQN(i)
	}
	return out
}

func repeatInt(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}
