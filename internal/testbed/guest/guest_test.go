package guest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/host"
)

func TestParseShowDepends(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		seen    []string
		want    []string
		wantErr string
	}{
		{
			name: "dependencies first, trailing space kept by modprobe",
			out: "insmod /lib/modules/k/kernel/drivers/virtio/virtio_ring.ko \n" +
				"insmod /lib/modules/k/kernel/drivers/virtio/virtio.ko \n" +
				"insmod /lib/modules/k/kernel/drivers/virtio/virtio_pci.ko \n",
			want: []string{
				"/lib/modules/k/kernel/drivers/virtio/virtio_ring.ko",
				"/lib/modules/k/kernel/drivers/virtio/virtio.ko",
				"/lib/modules/k/kernel/drivers/virtio/virtio_pci.ko",
			},
		},
		{
			name: "builtin lines need nothing",
			out:  "builtin virtio\ninsmod /m/9p.ko\n",
			want: []string{"/m/9p.ko"},
		},
		{
			name: "a module already listed by an earlier call is skipped",
			out:  "insmod /m/virtio.ko\ninsmod /m/9pnet.ko\n",
			seen: []string{"/m/virtio.ko"},
			want: []string{"/m/9pnet.ko"},
		},
		{name: "empty output", out: "\n", want: nil},
		{name: "compressed module", out: "insmod /m/9p.ko.xz\n", wantErr: "compressed"},
		{name: "module parameters", out: "insmod /m/9p.ko debug=1\n", wantErr: "parameters"},
		{name: "insmod without a path", out: "insmod\n", wantErr: "without a path"},
		{name: "unknown line", out: "FATAL: Module nope not found\n", wantErr: "unexpected line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]bool{}
			for _, s := range tt.seen {
				seen[s] = true
			}
			got, err := parseShowDepends([]byte(tt.out), seen)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"6.1.0-57-amd64", "6.1.0-57-amd64", 0},
		{"6.1.0-10-amd64", "6.1.0-9-amd64", 1},
		{"6.1.0-9-amd64", "6.1.0-10-amd64", -1},
		{"6.12.0-1-amd64", "6.1.0-57-amd64", 1},
		{"6.1.0-57-amd64", "6.1.0-57-cloud-amd64", -1},
		{"6.1", "6.1.0", -1},
		{"5.10.0-30-amd64", "6.1.0-1-amd64", -1},
		{"99999999999999999999999-x", "99999999999999999999998-x", 1},
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestFindKernel(t *testing.T) {
	boot := t.TempDir()
	mods := t.TempDir()
	for _, v := range []string{"6.1.0-9-amd64", "6.1.0-10-amd64", "6.18.44-host"} {
		mustWrite(t, filepath.Join(boot, "vmlinuz-"+v), "")
	}
	// The host's own kernel has no module tree: it must never be chosen.
	for _, v := range []string{"6.1.0-9-amd64", "6.1.0-10-amd64"} {
		mustWrite(t, filepath.Join(mods, v, "modules.dep"), "")
	}

	tests := []struct {
		name, want, wantVersion, wantErr string
	}{
		{name: "newest with modules", wantVersion: "6.1.0-10-amd64"},
		{name: "explicit", want: "6.1.0-9-amd64", wantVersion: "6.1.0-9-amd64"},
		{name: "explicit without modules", want: "6.18.44-host", wantErr: "modules.dep"},
		{name: "explicit missing", want: "7.0", wantErr: "vmlinuz-7.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := findKernel(boot, mods, tt.want)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.Version != tt.wantVersion || k.Image != filepath.Join(boot, "vmlinuz-"+tt.wantVersion) {
				t.Fatalf("got %+v, want version %s", k, tt.wantVersion)
			}
		})
	}

	if _, err := findKernel(t.TempDir(), mods, ""); err == nil {
		t.Fatal("empty /boot: want an error")
	}
}

func TestQEMUArgs(t *testing.T) {
	base := qemuConfig{
		Kernel: "/boot/vmlinuz-6.1.0-57-amd64", Initrd: "/c/i.cpio",
		MemoryMB: 3072, CPUs: 2, RootDir: "/", ShareDir: "/tmp/share,1",
	}
	t.Run("no NICs", func(t *testing.T) {
		args, err := qemuArgs(base)
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(args, " ")
		for _, want := range []string{
			"-accel tcg,thread=multi", "-m 3072", "-smp 2", "-nodefaults", "-no-reboot",
			"-kernel /boot/vmlinuz-6.1.0-57-amd64", "-initrd /c/i.cpio",
			"-append " + kernelCmdline,
			"path=/,security_model=none,readonly=on,multidevs=remap",
			// A comma in a path must be doubled or qemu splits the option.
			"path=/tmp/share,,1,security_model=none,multidevs=remap",
			"mount_tag=hostroot", "mount_tag=brickshare",
			"-nic none",
		} {
			if !strings.Contains(joined, want) {
				t.Errorf("argv lacks %q:\n%s", want, joined)
			}
		}
		if strings.Contains(joined, "-netdev") {
			t.Errorf("argv has a NIC: %s", joined)
		}
	})
	t.Run("two NICs", func(t *testing.T) {
		c := base
		c.NICs = 2
		args, err := qemuArgs(c)
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(args, " ")
		for _, want := range []string{
			"-netdev user,id=net0,net=10.0.2.0/24,ipv6=off -device virtio-net-pci,netdev=net0",
			"-netdev user,id=net1,net=10.0.3.0/24,ipv6=off -device virtio-net-pci,netdev=net1",
		} {
			if !strings.Contains(joined, want) {
				t.Errorf("argv lacks %q:\n%s", want, joined)
			}
		}
		if strings.Contains(joined, "-nic none") {
			t.Errorf("argv disables NICs: %s", joined)
		}
	})

	bad := []struct {
		name string
		mod  func(*qemuConfig)
	}{
		{"no kernel", func(c *qemuConfig) { c.Kernel = "" }},
		{"no share", func(c *qemuConfig) { c.ShareDir = "" }},
		{"tiny memory", func(c *qemuConfig) { c.MemoryMB = 64 }},
		{"no CPUs", func(c *qemuConfig) { c.CPUs = 0 }},
		{"three NICs", func(c *qemuConfig) { c.NICs = 3 }},
		{"negative NICs", func(c *qemuConfig) { c.NICs = -1 }},
		{"newline in path", func(c *qemuConfig) { c.ShareDir = "/tmp/a\nb" }},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.mod(&c)
			if _, err := qemuArgs(c); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestEnvScript(t *testing.T) {
	env := map[string]string{
		"PLAIN":  "value",
		"QUOTES": `it's "a" $HOME ` + "`id`" + ` \n`,
		"EMPTY":  "",
		"LINES":  "one\ntwo",
	}
	script, err := envScript(env)
	if err != nil {
		t.Fatal(err)
	}
	// The guest sources the file with bash: check that bash reads back
	// exactly the values, nothing expanded.
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	cmd := exec.Command(bash, "-c", script+`printf '%s\0' "$PLAIN" "$QUOTES" "$EMPTY" "$LINES"`)
	cmd.Env = []string{"HOME=/expanded"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	want := []string{env["PLAIN"], env["QUOTES"], env["EMPTY"], env["LINES"]}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("bash read back %q, want %q", got, want)
	}

	for _, k := range []string{"1X", "A-B", "", "BRICK_SHARE", "BRICK_FIXTURES", "A B"} {
		if _, err := envScript(map[string]string{k: "v"}); err == nil {
			t.Errorf("name %q: want an error", k)
		}
	}
	if _, err := envScript(map[string]string{"X": "a\x00b"}); err == nil {
		t.Error("NUL in value: want an error")
	}
}

func TestShareName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"brick", true},
		{"bin/e2e.test", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"/abs", false},
		{"a/../b", false},
		{"a//b", false},
		{".brick", false},
		{".brick/rc", false},
		{".bricks", true},
	}
	for _, tt := range tests {
		_, err := shareName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("shareName(%q) err = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestPrepareShare(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tool")
	mustWrite(t, src, "#!/bin/sh\n")
	if err := os.Chmod(src, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	err := prepareShare(dir, Options{
		Script: "echo hi",
		Files:  map[string]string{src: "bin/tool"},
		NICs:   2,
		Env:    map[string]string{"A": "b"},
	}, 42)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "bin", "tool"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm()&0o100 == 0 {
		t.Errorf("copied file lost its exec bit: %v", st.Mode())
	}
	for name, want := range map[string]string{
		".brick/script.sh": "echo hi",
		".brick/config":    "BRICK_NICS=2\nBRICK_TIMEOUT=42\n",
		".brick/env.sh":    "export A='b'\n",
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s = %q, want it to contain %q", name, b, want)
		}
	}
	for _, f := range []string{".brick/init.sh", ".brick/fixtures/udev.sh", ".brick/fixtures/iscsi.sh"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("share lacks %s: %v", f, err)
		}
	}

	err = prepareShare(t.TempDir(), Options{Files: map[string]string{src: ".brick/init.sh"}}, 1)
	if err == nil {
		t.Error("a file over the runner's init: want an error")
	}
	err = prepareShare(t.TempDir(), Options{Files: map[string]string{src: "x", src + "2": "x"}}, 1)
	if err == nil || !strings.Contains(err.Error(), "both go to x") {
		t.Errorf("two files to one name: err = %v", err)
	}
}

// readCPIO is the inverse of writeCPIO, enough to check its output.
func readCPIO(t *testing.T, b []byte) []cpioEntry {
	t.Helper()
	var out []cpioEntry
	for off := 0; ; {
		if len(b)-off < 110 || string(b[off:off+6]) != "070701" {
			t.Fatalf("bad header at %d", off)
		}
		field := func(i int) uint32 {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatal(err)
			}
			return uint32(v)
		}
		mode, size, rmaj, rmin, nameSize := field(1), int(field(6)), field(9), field(10), int(field(11))
		name := string(b[off+110 : off+110+nameSize-1])
		off += 110 + nameSize
		off += pad4(off)
		data := b[off : off+size]
		off += size
		off += pad4(off)
		if name == "TRAILER!!!" {
			if off != len(b) {
				t.Fatalf("%d bytes after the trailer", len(b)-off)
			}
			return out
		}
		out = append(out, cpioEntry{Name: name, Mode: mode, Data: bytes.Clone(data), RdevMajor: rmaj, RdevMinor: rmin})
	}
}

func TestInitramfsLayout(t *testing.T) {
	in := initramfsInputs{
		KernelVersion: "6.1.0-57-amd64",
		Busybox:       []byte("busybox"),
		RDInit:        []byte("#!/bin/busybox sh\n"),
		Modules:       []namedFile{{"virtio.ko", []byte("v")}, {"9p.ko", []byte("nine")}},
	}
	var buf bytes.Buffer
	if err := writeCPIO(&buf, in.entries()); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not 4-aligned", buf.Len())
	}
	got := map[string]cpioEntry{}
	for _, e := range readCPIO(t, buf.Bytes()) {
		got[e.Name] = e
	}
	if e := got["dev/console"]; e.Mode != modeChar|0o600 || e.RdevMajor != 5 || e.RdevMinor != 1 {
		t.Errorf("dev/console = %+v", e)
	}
	if e := got["init"]; e.Mode != modeFile|0o755 || string(e.Data) != string(in.RDInit) {
		t.Errorf("init = %+v", e)
	}
	if e := got["modules/order"]; string(e.Data) != "00-virtio.ko\n01-9p.ko\n" {
		t.Errorf("modules/order = %q", e.Data)
	}
	if e := got["modules/01-9p.ko"]; string(e.Data) != "nine" {
		t.Errorf("modules/01-9p.ko = %q", e.Data)
	}

	// The cache key follows every input.
	key := in.key()
	changed := in
	changed.Modules = []namedFile{{"virtio.ko", []byte("v")}, {"9p.ko", []byte("nine!")}}
	if changed.key() == key {
		t.Error("key ignores module contents")
	}
	changed = in
	changed.KernelVersion = "6.1.0-58-amd64"
	if changed.key() == key {
		t.Error("key ignores the kernel version")
	}
	if in.key() != key {
		t.Error("key is not stable")
	}

	if err := writeCPIO(&buf, []cpioEntry{{Name: "/abs"}}); err == nil {
		t.Error("absolute name: want an error")
	}
}

func TestTailBuffer(t *testing.T) {
	b := newTailBuffer(8)
	for _, s := range []string{"abc", "defg", "hij"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := string(b.Bytes()); got != "cdefghij" {
		t.Errorf("tail = %q, want %q", got, "cdefghij")
	}
	b.Write([]byte("0123456789"))
	if got := string(b.Bytes()); got != "23456789" {
		t.Errorf("tail after a big write = %q", got)
	}
}

func TestLastLines(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"", 3, ""},
		{"only", 1, "only"},
	}
	for _, tt := range tests {
		if got := lastLines([]byte(tt.in), tt.n); got != tt.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestParseUptimes(t *testing.T) {
	tests := []struct {
		in           string
		boot, script time.Duration
	}{
		{"7.59 8.48\n", 7590 * time.Millisecond, 890 * time.Millisecond},
		{"garbage", 0, 0},
		{"9 8", 0, 0},
	}
	for _, tt := range tests {
		boot, script := parseUptimes([]byte(tt.in))
		if (boot-tt.boot).Abs() > time.Millisecond || (script-tt.script).Abs() > time.Millisecond {
			t.Errorf("parseUptimes(%q) = %v, %v; want %v, %v", tt.in, boot, script, tt.boot, tt.script)
		}
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestClearStale(t *testing.T) {
	share := t.TempDir()
	ctl := filepath.Join(share, ctlDir)
	for _, p := range []string{"ready", "rc", "exec-1/rc", "exec-12/output", "fixtures/iscsi.sh", "script.sh"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ctl, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ctl, p), []byte("0"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := clearStale(share); err != nil {
		t.Fatal(err)
	}
	left, err := filepath.Glob(filepath.Join(ctl, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(ctl, "fixtures"), filepath.Join(ctl, "script.sh")}; !reflect.DeepEqual(left, want) {
		t.Fatalf("left %v, want %v: results go, inputs stay", left, want)
	}
	if err := clearStale(t.TempDir()); err != nil {
		t.Fatalf("nothing to clear: %v", err)
	}
}

// TestGuestHidesBrickState: every directory brick writes or reads its
// config from is hidden from the host's root or lies on the guest's own
// /run, and the guest's second stage checks each is empty.
func TestGuestHidesBrickState(t *testing.T) {
	fresh := FreshDirs()
	for _, d := range []string{host.LibDir, "/etc/brick", host.RunDir, host.LockDir, "/run/lock/brick"} {
		require.Contains(t, fresh, d)
	}
	for _, d := range HiddenDirs {
		require.False(t, strings.HasPrefix(d.Path, "/run/"), "%s is on the guest's tmpfs /run already", d.Path)
	}
	cfg := configScript(1, 60)
	require.Contains(t, cfg, "BRICK_HIDDEN_DIRS=(/var/lib/brick:0700 /etc/brick:0755 /etc/iscsi/nodes:0700 /etc/iscsi/send_targets:0700 /etc/iscsi/ifaces:0700 /etc/multipath:0755)\n")
	require.Contains(t, cfg, "BRICK_FRESH_DIRS=(")
	require.Equal(t, "/var/lib/brick\n/etc/brick\n/etc/iscsi/nodes\n/etc/iscsi/send_targets\n/etc/iscsi/ifaces\n/etc/multipath\n", string(hiddenList()))
}
