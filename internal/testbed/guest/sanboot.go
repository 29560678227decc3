package guest

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// BootDisk is a tiny BIOS-bootable raw disk image: a FAT file system on
// the whole disk (no partition table) with syslinux in its boot sector,
// Debian's kernel and an initramfs whose init prints Marker on the serial
// console and powers the machine off.
type BootDisk struct {
	Path   string
	Marker string
	Kernel Kernel
}

// bootDiskMiB leaves room for the kernel (~8 MiB) and the initramfs.
const bootDiskMiB = 16

// BuildBootDisk writes the boot disk into dir. It needs syslinux, mtools
// and dosfstools (test/install.sh) but not root: nothing is mounted.
func BuildBootDisk(ctx context.Context, dir, marker string) (*BootDisk, error) {
	k, err := findKernel("/boot", "/lib/modules", "")
	if err != nil {
		return nil, err
	}
	initrd, err := markerInitramfs(marker)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{"initrd.gz": initrd, "syslinux.cfg": []byte(syslinuxConfig)}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	img := filepath.Join(dir, "boot.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		return nil, err
	}
	if err := os.Truncate(img, bootDiskMiB<<20); err != nil {
		return nil, err
	}
	steps := [][]string{
		{"mkfs.vfat", "-n", "BRICKBOOT", img},
		{"mcopy", "-i", img, k.Image, "::vmlinuz"},
		{"mcopy", "-i", img, filepath.Join(dir, "initrd.gz"), "::initrd.gz"},
		{"mcopy", "-i", img, filepath.Join(dir, "syslinux.cfg"), "::syslinux.cfg"},
		// syslinux writes its boot sector and ldlinux.sys through mtools.
		{"syslinux", "--install", img},
	}
	for _, argv := range steps {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		out, err := exec.CommandContext(cctx, argv[0], argv[1:]...).CombinedOutput()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("boot disk: %s: %w: %s (install syslinux mtools dosfstools: test/install.sh)", strings.Join(argv, " "), err, bytes.TrimSpace(out))
		}
	}
	return &BootDisk{Path: img, Marker: marker, Kernel: k}, nil
}

// syslinuxConfig boots the kernel at once with the console on the serial
// port; panic=-1 turns a failed boot into a reboot, which -no-reboot ends.
const syslinuxConfig = `SERIAL 0 115200
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL vmlinuz
  APPEND initrd=initrd.gz console=ttyS0,115200 panic=-1 loglevel=4
`

// markerInitramfs is a gzip'd newc archive: busybox and an init that
// prints the marker (with the uptime) and powers off.
func markerInitramfs(marker string) ([]byte, error) {
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return nil, fmt.Errorf("boot disk: %w (install busybox-static)", err)
	}
	init := "#!/bin/busybox sh\n" +
		"/bin/busybox mount -t proc proc /proc\n" +
		"/bin/busybox echo \"" + marker + " uptime $(/bin/busybox cut -d' ' -f1 /proc/uptime)\" >/dev/console\n" +
		"/bin/busybox poweroff -f\n"
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	err = writeCPIO(zw, []cpioEntry{
		{Name: "bin", Mode: modeDir | 0o755},
		{Name: "dev", Mode: modeDir | 0o755},
		{Name: "dev/console", Mode: modeChar | 0o600, RdevMajor: 5, RdevMinor: 1},
		{Name: "proc", Mode: modeDir | 0o755},
		{Name: "bin/busybox", Mode: modeFile | 0o755, Data: bb},
		{Name: "init", Mode: modeFile | 0o755, Data: []byte(init)},
	})
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	return buf.Bytes(), err
}

// SANBootMAC is the diskless machine's NIC address, e.g. for the Ironic
// port whose per-MAC iPXE configuration it boots.
const SANBootMAC = "52:54:00:12:34:56"

// SANBootOptions describe a diskless machine that network-boots iPXE.
type SANBootOptions struct {
	// Script is the iPXE script ("#!ipxe" first) the machine gets by
	// DHCP and TFTP from slirp, as a PXE server hands out Ironic's.
	Script string
	// Files are more files under the TFTP root (relative path to
	// content), e.g. the per-MAC configuration Ironic's boot.ipxe chains.
	Files map[string]string
	// Dir holds the TFTP root and the console log.
	Dir string
	// Timeout bounds the machine's life (default 100 s).
	Timeout time.Duration
}

// SANBootResult is what the machine showed.
type SANBootResult struct {
	Console  []byte        // serial console (iPXE's text through sgabios, then the kernel's)
	Duration time.Duration // qemu start to exit
}

// ansiEscape matches the cursor moves sgabios writes around each character.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// Plain is the console without sgabios's escape sequences.
func (r *SANBootResult) Plain() string { return ansiEscape.ReplaceAllString(string(r.Console), "") }

// SANBoot starts a diskless qemu (TCG, a virtio NIC with the iPXE ROM
// of Debian's ipxe-qemu, slirp networking: the host is 10.0.2.2) that runs
// Script, and waits until it powers off or Timeout. It holds the guest
// slot while qemu runs. A machine that does not power off is an error
// with its console.
func SANBoot(ctx context.Context, o SANBootOptions) (*SANBootResult, error) {
	if o.Timeout <= 0 {
		o.Timeout = 100 * time.Second
	}
	if !strings.HasPrefix(o.Script, "#!ipxe\n") {
		return nil, fmt.Errorf("san boot: the script does not start with #!ipxe")
	}
	tftp := filepath.Join(o.Dir, "tftp")
	if err := os.MkdirAll(tftp, 0o755); err != nil {
		return nil, err
	}
	files := map[string]string{"boot.ipxe": o.Script}
	for name, data := range o.Files {
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("san boot: file %q is not under the TFTP root", name)
		}
		files[name] = data
	}
	for name, data := range files {
		path := filepath.Join(tftp, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			return nil, err
		}
	}
	release, err := acquireSlot(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	defer release()
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "qemu-system-x86_64", sanBootArgs(tftp)...)
	var console bytes.Buffer
	cmd.Stdout, cmd.Stderr = &console, &console
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	res := &SANBootResult{Console: console.Bytes(), Duration: time.Since(start)}
	_ = os.WriteFile(filepath.Join(o.Dir, "console.log"), res.Console, 0o644)
	if cctx.Err() != nil {
		err = errors.Join(err, fmt.Errorf("did not power off within %v", o.Timeout))
	}
	if err != nil {
		return res, fmt.Errorf("san boot: %w; console:\n%s", err, lastLines(res.Console, 40))
	}
	return res, nil
}

// sanBootArgs: no disk and no VGA, boot from the network; sgabios copies
// iPXE's screen to the serial console; -no-reboot ends a panic. slirp's
// network is a /16 around the usual 10.0.2.x addresses: a second portal
// such as 10.0.3.2 is then on-link, slirp answers no ARP for it, and that
// iPXE path fails inside the machine instead of slirp connecting to it
// off this host.
func sanBootArgs(tftp string) []string {
	return []string{
		"-accel", "tcg", "-m", "256", "-display", "none", "-no-reboot", "-nodefaults",
		"-serial", "stdio", "-device", "sga",
		"-netdev", "user,id=n0,net=10.0.0.0/16,host=10.0.2.2,dhcpstart=10.0.2.15,tftp=" + qemuOptValue(tftp) + ",bootfile=boot.ipxe",
		"-device", "virtio-net-pci,netdev=n0,mac=" + SANBootMAC,
		"-boot", "n",
	}
}
