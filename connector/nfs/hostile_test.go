package nfs_test

import (
	"testing"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/internal/hostile"
)

// TestHostileConnectionInfo feeds hostile exports, names, mount options and
// formats to Connect, Disconnect and DevicePaths: each is refused naming
// the key and nothing runs (no mount, no losetup, no umount). A space in
// the path is no attack: the export is one argv element (TestExportWithSpace).
func TestHostileConnectionInfo(t *testing.T) {
	base := map[string]any{
		"driver_volume_type": "nfs",
		"export":             "10.0.0.1:/srv/cinder",
		"name":               "volume-11111111-1111-4111-8111-111111111111",
		"options":            "-o vers=4.2",
		"format":             "raw",
		"access_mode":        "rw",
	}
	cases := hostile.Common("export")
	cases = append(cases, hostile.Strings("export",
		"10.0.0.1:/srv/../../etc", "10.0.0.1:/srv/./x", "10.0.0.1:srv", "10.0.0.1:", ":/srv", "/srv", "-o:/srv", "--bind:/srv",
		"10.0.0.1:/srv;reboot", "$(reboot):/srv", "10.0.0.1:/srv\t-o exec", "a b:/srv", "[::1:/srv", "[fe80::1%eth0;x]:/srv",
		"10.0.0.1:/srv\nx", "fe80::1:/srv", "10.0.0.1:/srv/"+hostile.Huge)...)
	cases = append(cases, hostile.Common("name")...)
	cases = append(cases, hostile.Strings("name",
		"../../etc/shadow", "/etc/shadow", "-rf", "a/../../b", "a/./b", ".hidden", "a//b", "a/-x", "vol;reboot", "vol$(reboot)", "vol\nx")...)
	cases = append(cases, hostile.Strings("options",
		"-o exec", "-o suid", "-o dev", "-o bind", "-o remount", "-o helper=/bin/sh", "-o vers=4.2;reboot", "-o vers=4.2 /dev/sda /mnt",
		"--bind", "-t ext4", "-o sec=$(reboot)", "-o addr=-x", "-o vers=9", "x\x00", hostile.Huge, 5, []any{"vers=3"})...)
	cases = append(cases, hostile.Strings("format", "raw;reboot", "../qcow2", "-f", "QCOW2", hostile.Huge, 5)...)
	cases = append(cases, hostile.Strings("access_mode", "rw;reboot", "-rw", 1)...)

	n := hostile.Check(t, base, cases, func(t *testing.T) (connector.Connector, *hosttest.Runner) {
		r := hosttest.NewRunner(nil)
		h, _ := hosttest.New(t, r)
		return nfs.New(h, nfs.Options{AsBlock: true}), r
	})
	t.Logf("nfs: %d hostile (case, entry point) pairs refused, 0 commands run", n)
}
