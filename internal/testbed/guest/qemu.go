package guest

import (
	"fmt"
	"strconv"
	"strings"
)

// qemuConfig is what varies between boots.
type qemuConfig struct {
	Kernel   string // vmlinuz path
	Initrd   string // initramfs path
	MemoryMB int
	CPUs     int
	NICs     int    // slirp NICs; NIC i is on 10.0.(i+2).0/24, host at .2
	RootDir  string // host directory exported read-only as the guest's lower root
	ShareDir string // host directory exported read-write at /brick
}

// Tags the first stage mounts by (see test/guest/rdinit.sh).
const (
	rootTag  = "hostroot"
	shareTag = "brickshare"
)

// maxNICs keeps the slirp subnets (10.0.2.0/24, 10.0.3.0/24, ...) few and
// predictable; tests need two paths at most.
const maxNICs = 2

// kernelCmdline: serial console for the runner's console capture; panic=-1
// with qemu's -no-reboot turns a guest panic into an immediate qemu exit;
// mitigations=off because TCG pays for every one of them; no_timer_check
// because on a loaded host the emulated CPU is too slow for the kernel's
// IO-APIC timer test, which then panics the boot ("IO-APIC + timer doesn't
// work!", seen at load 15+ on 2 cores).
const kernelCmdline = "console=ttyS0 rdinit=/init panic=-1 quiet mitigations=off no_timer_check"

// qemuArgs builds qemu-system-x86_64's argv (without the program name). The
// console goes to stdout, so the runner captures it through a pipe.
func qemuArgs(c qemuConfig) ([]string, error) {
	switch {
	case c.Kernel == "" || c.Initrd == "":
		return nil, fmt.Errorf("qemu args: kernel and initrd are required")
	case c.RootDir == "" || c.ShareDir == "":
		return nil, fmt.Errorf("qemu args: root and share directories are required")
	case c.MemoryMB < 256:
		return nil, fmt.Errorf("qemu args: memory %d MiB is below 256 MiB", c.MemoryMB)
	case c.CPUs < 1:
		return nil, fmt.Errorf("qemu args: %d CPUs", c.CPUs)
	case c.NICs < 0 || c.NICs > maxNICs:
		return nil, fmt.Errorf("qemu args: %d NICs, want 0..%d", c.NICs, maxNICs)
	}
	for _, p := range []string{c.Kernel, c.Initrd, c.RootDir, c.ShareDir} {
		if strings.ContainsAny(p, "\n\x00") {
			return nil, fmt.Errorf("qemu args: path %q contains a newline or NUL", p)
		}
	}
	args := []string{
		"-accel", "tcg,thread=multi",
		"-cpu", "max",
		"-m", strconv.Itoa(c.MemoryMB),
		"-smp", strconv.Itoa(c.CPUs),
		"-nodefaults",
		"-no-user-config",
		"-display", "none",
		"-chardev", "stdio,id=console,signal=off",
		"-serial", "chardev:console",
		"-no-reboot",
		"-kernel", c.Kernel,
		"-initrd", c.Initrd,
		"-append", kernelCmdline,
		// multidevs=remap: the host's / spans several filesystems; without
		// it inode numbers could collide in the guest.
		"-fsdev", "local,id=" + rootTag + ",path=" + qemuOptValue(c.RootDir) + ",security_model=none,readonly=on,multidevs=remap",
		"-device", "virtio-9p-pci,fsdev=" + rootTag + ",mount_tag=" + rootTag,
		"-fsdev", "local,id=" + shareTag + ",path=" + qemuOptValue(c.ShareDir) + ",security_model=none,multidevs=remap",
		"-device", "virtio-9p-pci,fsdev=" + shareTag + ",mount_tag=" + shareTag,
	}
	if c.NICs == 0 {
		args = append(args, "-nic", "none")
	}
	for i := 0; i < c.NICs; i++ {
		id := fmt.Sprintf("net%d", i)
		// ipv6=off: slirp would otherwise advertise an IPv6 default route,
		// and the guest must reach nothing but the host's slirp addresses.
		args = append(args,
			"-netdev", fmt.Sprintf("user,id=%s,net=10.0.%d.0/24,ipv6=off", id, i+2),
			"-device", "virtio-net-pci,netdev="+id,
		)
	}
	return args, nil
}

// qemuOptValue escapes a value inside a comma-separated qemu option list,
// where a literal comma is written twice.
func qemuOptValue(s string) string { return strings.ReplaceAll(s, ",", ",,") }
