package guest

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestMarkerInitramfs(t *testing.T) {
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Skip("no /bin/busybox (test/install.sh)")
	}
	gz, err := markerInitramfs("BRICK-MARK-1")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]cpioEntry{}
	for _, e := range readCPIO(t, raw) {
		names[e.Name] = e
	}
	if e := names["dev/console"]; e.Mode != modeChar|0o600 || e.RdevMajor != 5 || e.RdevMinor != 1 {
		t.Errorf("dev/console = %+v", e)
	}
	init := string(names["init"].Data)
	if !strings.Contains(init, "BRICK-MARK-1") || !strings.Contains(init, "poweroff -f") {
		t.Errorf("init prints no marker or does not power off:\n%s", init)
	}
}

func TestBuildBootDisk(t *testing.T) {
	for _, tool := range []string{"mkfs.vfat", "mcopy", "syslinux"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s (test/install.sh)", tool)
		}
	}
	d, err := BuildBootDisk(context.Background(), t.TempDir(), "BRICK-MARK-2")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != bootDiskMiB<<20 {
		t.Errorf("disk has %d bytes", len(b))
	}
	// syslinux's boot sector: its OEM name and the BIOS boot signature.
	if !bytes.Contains(b[:512], []byte("SYSLINUX")) || b[510] != 0x55 || b[511] != 0xaa {
		t.Errorf("sector 0 is not syslinux's boot sector: % x", b[:16])
	}
}

func TestSANBootArgs(t *testing.T) {
	got := strings.Join(sanBootArgs("/tmp/a,b"), " ")
	for _, want := range []string{"-boot n", "tftp=/tmp/a,,b,bootfile=boot.ipxe", "-device sga", "-no-reboot", "-device virtio-net-pci,netdev=n0,mac=" + SANBootMAC, "net=10.0.0.0/16,host=10.0.2.2,"} {
		if !strings.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
	if _, err := SANBoot(context.Background(), SANBootOptions{Script: "echo hi", Dir: t.TempDir()}); err == nil {
		t.Error("a script without #!ipxe was accepted")
	}
	if _, err := SANBoot(context.Background(), SANBootOptions{Script: "#!ipxe\n", Files: map[string]string{"../x": ""}, Dir: t.TempDir()}); err == nil {
		t.Error("a file outside the TFTP root was accepted")
	}
}

func TestSANBootPlain(t *testing.T) {
	r := &SANBootResult{Console: []byte("\x1b[25;1Hi\x1b[25;2HP\x1b[25;3HX\x1b[25;4HE\x1b[25;5H\nMARK up 2.8s\n")}
	if got := r.Plain(); got != "iPXE\nMARK up 2.8s\n" {
		t.Errorf("Plain() = %q", got)
	}
}
