// Command floor is the yardstick for `brick get-connector -f json`: a
// minimal static Go program that reads the same host files and prints the
// same JSON, with no flags, config, logging or validation beyond what the
// output needs. Whatever brick spends above it is brick's own overhead.
// It is a benchmark tool, not part of brick.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

type props struct {
	Platform         string `json:"platform"`
	OSType           string `json:"os_type"`
	IP               string `json:"ip"`
	Host             string `json:"host"`
	Multipath        bool   `json:"multipath"`
	EnforceMultipath bool   `json:"enforce_multipath"`
	Initiator        string `json:"initiator,omitempty"`
	SystemUUID       string `json:"system uuid,omitempty"`
	NQN              string `json:"nqn,omitempty"`
	NVMeHostID       string `json:"nvme_hostid,omitempty"`
	UUID             string `json:"uuid,omitempty"`
	NativeMultipath  bool   `json:"nvme_native_multipath"`
	DoLocalAttach    bool   `json:"do_local_attach"`
}

func read(name string) string {
	b, _ := os.ReadFile(name)
	return strings.TrimSpace(string(b))
}

func main() {
	p := props{Platform: "x86_64", OSType: "linux", DoLocalAttach: true}
	p.IP = ip()
	p.Host = read("/proc/sys/kernel/hostname")
	for _, l := range strings.Split(read("/etc/iscsi/initiatorname.iscsi"), "\n") {
		if v, ok := strings.CutPrefix(l, "InitiatorName="); ok {
			p.Initiator = v
		}
	}
	_, _ = os.ReadDir("/sys/class/fc_host")
	p.SystemUUID = read("/sys/class/dmi/id/product_uuid")
	p.NQN = read("/etc/nvme/hostnqn")
	p.NVMeHostID = read("/etc/nvme/hostid")
	p.NativeMultipath = read("/sys/module/nvme_core/parameters/multipath") == "Y"
	p.UUID = rootUUID()
	out, _ := json.MarshalIndent(p, "", "  ")
	os.Stdout.Write(append(out, '\n'))
}

// ip is the address of the interface holding the IPv4 default route.
func ip() string {
	type route struct {
		iface  string
		prefix netip.Prefix
	}
	var routes []route
	def := ""
	sc := bufio.NewScanner(strings.NewReader(read("/proc/1/net/route")))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[0] == "Iface" {
			continue
		}
		dst, mask := hexAddr(f[1]), hexAddr(f[7])
		bits := 0
		for _, b := range mask.AsSlice() {
			for ; b != 0; b <<= 1 {
				bits++
			}
		}
		if bits == 0 && def == "" {
			def = f[0]
		}
		routes = append(routes, route{f[0], netip.PrefixFrom(dst, bits)})
	}
	var prev string
	sc = bufio.NewScanner(bytes.NewReader([]byte(read("/proc/1/net/fib_trie"))))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "/32 host LOCAL" {
			a, err := netip.ParseAddr(prev)
			if err == nil && !a.IsLoopback() {
				for _, r := range routes {
					if r.iface == def && r.prefix.Bits() > 0 && r.prefix.Contains(a) {
						return a.String()
					}
				}
			}
		}
		if f := strings.Fields(l); len(f) > 1 {
			prev = f[1]
		}
	}
	return "127.0.0.1"
}

func hexAddr(s string) netip.Addr {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return netip.Addr{}
	}
	var a [4]byte
	binary.LittleEndian.PutUint32(a[:], binary.BigEndian.Uint32(b))
	return netip.AddrFrom4(a)
}

// rootUUID is the file system UUID of the device mounted on /.
func rootUUID() string {
	src := ""
	for _, l := range strings.Split(read("/proc/self/mountinfo"), "\n") {
		f := strings.Fields(l)
		for i, v := range f {
			if v == "-" && len(f) > i+2 && f[4] == "/" {
				src = f[i+2]
			}
		}
	}
	want, err := filepath.EvalSymlinks(src)
	if err != nil {
		return ""
	}
	entries, _ := os.ReadDir("/dev/disk/by-uuid")
	for _, e := range entries {
		if got, _ := filepath.EvalSymlinks(filepath.Join("/dev/disk/by-uuid", e.Name())); got == want {
			return e.Name()
		}
	}
	return ""
}
