package fc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/fc"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/multipath"
	"github.com/brick-storage/brick/scsi"
)

// fabric models a real FC host's sysfs: HBAs on PCI functions, remote
// ports the HBAs logged in to, and an array that maps LUNs to ports. A
// goroutine plays the kernel: it answers writes to each host's scan file
// (creating the SCSI target and the disk when the array maps that LUN) and
// to each disk's delete file (removing it), as the real sysfs does.
// Scans and Deletes first answer what is pending, so a test never waits
// for the goroutine's next tick.
type fabric struct {
	t    *testing.T
	root string

	stepMu sync.Mutex // one pass over the scan and delete files at a time

	mu      sync.Mutex
	hbas    map[int]string            // host -> PCI function
	ports   map[[3]int]string         // host, channel, target -> target WWPN
	luns    map[string]map[int]string // target WWPN -> LUN -> WWID
	disks   map[string]string         // disk -> H:C:T:L
	wwidAt  map[string]string         // H:C:T:L -> WWID, overriding luns
	scans   []string                  // "hostH C T L" in order
	deletes []string                  // disks deleted
	nextSD  int
}

func newFabric(t *testing.T, root string) *fabric {
	f := &fabric{t: t, root: root, hbas: map[int]string{}, ports: map[[3]int]string{}, luns: map[string]map[int]string{}, disks: map[string]string{}, wwidAt: map[string]string{}, nextSD: 1}
	hosttest.WriteFile(t, root, "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go f.kernel(ctx, done)
	return f
}

func (f *fabric) hostDev(h int) string {
	return fmt.Sprintf("/sys/devices/pci0000:00/0000:00:03.0/%s/host%d", f.hbas[h], h)
}

// addHBA adds an FC port at a PCI function with the given state.
func (f *fabric) addHBA(h int, pci, wwpn, state string) {
	f.mu.Lock()
	f.hbas[h] = pci
	f.mu.Unlock()
	dev := f.hostDev(h) + fmt.Sprintf("/fc_host/host%d", h)
	hosttest.WriteFile(f.t, f.root, dev+"/port_name", "0x"+wwpn+"\n")
	hosttest.WriteFile(f.t, f.root, dev+"/node_name", "0x20"+wwpn[2:]+"\n")
	hosttest.WriteFile(f.t, f.root, dev+"/port_state", state+"\n")
	hosttest.Symlink(f.t, f.root, fmt.Sprintf("/sys/class/fc_host/host%d", h), "../../devices/pci0000:00/0000:00:03.0/"+pci+fmt.Sprintf("/host%d/fc_host/host%d", h, h))
	hosttest.WriteFile(f.t, f.root, fmt.Sprintf("/sys/class/scsi_host/host%d/scan", h), "")
}

// addRemotePort logs target port wwpn in on host h as rport-h:c-n with
// SCSI target number tgt; with scanned, the FC transport's SCSI target
// exists already (something on it was scanned before).
func (f *fabric) addRemotePort(h, c, n, tgt int, wwpn string, scanned bool) {
	f.mu.Lock()
	f.ports[[3]int{h, c, tgt}] = wwpn
	f.mu.Unlock()
	rp := fmt.Sprintf("/sys/class/fc_remote_ports/rport-%d:%d-%d", h, c, n)
	hosttest.WriteFile(f.t, f.root, rp+"/port_name", "0x"+wwpn+"\n")
	hosttest.WriteFile(f.t, f.root, rp+"/roles", "FCP Target\n")
	hosttest.WriteFile(f.t, f.root, rp+"/port_state", "Online\n")
	hosttest.WriteFile(f.t, f.root, rp+"/scsi_target_id", strconv.Itoa(tgt)+"\n")
	if scanned {
		f.addTransportTarget(h, c, tgt, wwpn)
	}
}

func (f *fabric) addTransportTarget(h, c, tgt int, wwpn string) {
	hosttest.WriteFile(f.t, f.root, fmt.Sprintf("/sys/class/fc_transport/target%d:%d:%d/port_name", h, c, tgt), "0x"+wwpn+"\n")
}

// mapLUN makes the array export a LUN with wwid behind a target port.
func (f *fabric) mapLUN(wwpn string, lun int, wwid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.luns[wwpn] == nil {
		f.luns[wwpn] = map[int]string{}
	}
	f.luns[wwpn][lun] = wwid
}

// addDisk lays out a SCSI disk the way the kernel shows it. Callers hold no lock.
func (f *fabric) addDisk(a scsi.HCTL, wwid string) string {
	f.mu.Lock()
	name := "sd" + string(rune('a'+f.nextSD))
	f.nextSD++
	f.disks[name] = a.String()
	wwpn := f.ports[[3]int{a.Host, a.Channel, a.Target}]
	f.mu.Unlock()
	f.addTransportTarget(a.Host, a.Channel, a.Target, wwpn)
	rel := fmt.Sprintf("pci0000:00/0000:00:03.0/%s/host%d/rport-%d:%d-0/target%d:%d:%d/%s", f.hbas[a.Host], a.Host, a.Host, a.Channel, a.Host, a.Channel, a.Target, a)
	dev := "/sys/devices/" + rel
	hosttest.Mkdir(f.t, f.root, dev+"/block/"+name+"/holders")
	hosttest.WriteFile(f.t, f.root, dev+"/block/"+name+"/dev", fmt.Sprintf("8:%d\n", 16*f.nextSD))
	hosttest.WriteFile(f.t, f.root, dev+"/block/"+name+"/size", "2048\n")
	hosttest.WriteFile(f.t, f.root, dev+"/block/"+name+"/ro", "0\n")
	hosttest.WriteFile(f.t, f.root, dev+"/delete", "")
	switch {
	case strings.HasPrefix(wwid, "serial:"): // no page 0x83; a unit serial
		sn := strings.TrimPrefix(wwid, "serial:")
		hosttest.WriteFile(f.t, f.root, dev+"/vpd_pg80", string([]byte{0, 0x80, 0, byte(len(sn))})+sn)
	case wwid != "":
		hosttest.WriteFile(f.t, f.root, dev+"/wwid", wwid+"\n")
	}
	hosttest.Symlink(f.t, f.root, "/sys/class/scsi_device/"+a.String()+"/device", "../../../devices/"+rel)
	hosttest.Symlink(f.t, f.root, "/sys/block/"+name, "../devices/"+rel+"/block/"+name)
	hosttest.Symlink(f.t, f.root, dev+"/block/"+name+"/device", "../../../"+a.String())
	hosttest.WriteFile(f.t, f.root, "/dev/"+name, "")
	return name
}

// addLink makes the by-path link udev creates for a disk.
func (f *fabric) addLink(h int, wwpn string, lun int, disk string) string {
	name := fc.ByPathName("", f.hbas[h], wwpn, lun)
	hosttest.Symlink(f.t, f.root, "/dev/disk/by-path/"+name, "../../"+disk)
	return "/dev/disk/by-path/" + name
}

func (f *fabric) removeDisk(name string) {
	f.mu.Lock()
	hctl := f.disks[name]
	delete(f.disks, name)
	f.deletes = append(f.deletes, name)
	f.mu.Unlock()
	target, _ := os.Readlink(filepath.Join(f.root, "/sys/block", name))
	devDir := filepath.Dir(filepath.Dir(filepath.Join(f.root, "/sys/block", target)))
	os.RemoveAll(devDir)
	os.Remove(filepath.Join(f.root, "/sys/block", name))
	os.RemoveAll(filepath.Join(f.root, "/sys/class/scsi_device", hctl))
	os.Remove(filepath.Join(f.root, "/dev", name))
	links, _ := filepath.Glob(filepath.Join(f.root, "/dev/disk/by-path/*"))
	for _, l := range links {
		if t, _ := os.Readlink(l); filepath.Base(t) == name {
			os.Remove(l)
		}
	}
}

func (f *fabric) kernel(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		f.step()
	}
}

// step answers every pending write to a scan or delete file.
func (f *fabric) step() {
	f.stepMu.Lock()
	defer f.stepMu.Unlock()
	scanFiles, _ := filepath.Glob(filepath.Join(f.root, "/sys/class/scsi_host/host*/scan"))
	for _, sf := range scanFiles {
		b, err := os.ReadFile(sf)
		if err != nil || len(b) == 0 {
			continue
		}
		_ = os.WriteFile(sf, nil, 0o644)
		h, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(sf)), "host"))
		f.scan(h, string(b))
	}
	deletes, _ := filepath.Glob(filepath.Join(f.root, "/sys/devices/*/*/*/*/*/*/*/delete"))
	for _, df := range deletes {
		if b, err := os.ReadFile(df); err == nil && string(b) == "1" {
			blocks, _ := filepath.Glob(filepath.Join(filepath.Dir(df), "block", "*"))
			for _, bl := range blocks {
				f.removeDisk(filepath.Base(bl))
			}
		}
	}
}

// scan answers "C T L" (C and T may be "-") on host h.
func (f *fabric) scan(h int, line string) {
	f.mu.Lock()
	f.scans = append(f.scans, fmt.Sprintf("host%d %s", h, line))
	var todo []scsi.HCTL
	var wwids []string
	fields := strings.Fields(line)
	c, tgt := hosttest.Word(f.t, fields, 0), hosttest.Word(f.t, fields, 1)
	lun, _ := strconv.Atoi(hosttest.Word(f.t, fields, 2))
	for key, wwpn := range f.ports {
		if key[0] != h || (c != "-" && c != strconv.Itoa(key[1])) || (tgt != "-" && tgt != strconv.Itoa(key[2])) {
			continue
		}
		a := scsi.HCTL{Host: h, Channel: key[1], Target: key[2], LUN: lun}
		exists := false
		for _, x := range f.disks {
			if x == a.String() {
				exists = true
			}
		}
		if w, ok := f.luns[wwpn][lun]; ok && !exists {
			if o, ok := f.wwidAt[a.String()]; ok {
				w = o
			}
			todo = append(todo, a)
			wwids = append(wwids, w)
		}
	}
	f.mu.Unlock()
	for i, a := range todo {
		f.addDisk(a, wwids[i])
	}
}

func (f *fabric) Scans() []string {
	f.step()
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.scans...)
}

func (f *fabric) Deletes() []string {
	f.step()
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.deletes...)
}

const (
	wwidVol   = "naa.600140512345678900000000000000a1"
	wwidOther = "naa.600140512345678900000000000000b2"
	hbaOn     = "10000090fa1b2c01"
	hbaOff    = "10000090fa1b2c02"
)

// realHost builds the usual test host: host5 Online on 0000:05:00.2 and
// host6 Linkdown on 0000:05:00.3, both zoned to target ports A and B.
// On host5, A was scanned before (fc_transport target exists), B only
// logged in (fc_remote_ports with scsi_target_id).
func realHost(t *testing.T, runner host.Runner) (*host.Host, *fabric) {
	h, root := hosttest.New(t, runner)
	f := newFabric(t, root)
	f.addHBA(5, "0000:05:00.2", hbaOn, "Online")
	f.addHBA(6, "0000:05:00.3", hbaOff, "Linkdown")
	f.addRemotePort(5, 0, 0, 0, tgtA, true)
	f.addRemotePort(5, 0, 1, 1, tgtB, false)
	return h, f
}

func ci(t *testing.T, data string) connector.ConnectionInfo {
	t.Helper()
	c, err := connector.ParseConnectionInfo([]byte(`{"driver_volume_type":"fibre_channel","data":{` + data + `}}`))
	require.NoError(t, err)
	return c
}

func quickOpts() fc.Options {
	return fc.Options{SCSI: scsi.Options{DeviceTimeout: 2 * time.Second, GoneTimeout: 2 * time.Second}}
}

func TestListHBAs(t *testing.T) {
	h, f := realHost(t, nil)
	_ = f
	// Software FCoE on a virtual interface: no PCI, so no by-path name.
	hosttest.WriteFile(t, h.FS.Root(), "/sys/devices/virtual/net/fc0/ctlr_0/host7/fc_host/host7/port_name", "0x2000020000000b01\n")
	hosttest.WriteFile(t, h.FS.Root(), "/sys/devices/virtual/net/fc0/ctlr_0/host7/fc_host/host7/node_name", "0x1000020000000b01\n")
	hosttest.WriteFile(t, h.FS.Root(), "/sys/devices/virtual/net/fc0/ctlr_0/host7/fc_host/host7/port_state", "Online\n")
	hosttest.Symlink(t, h.FS.Root(), "/sys/class/fc_host/host7", "../../devices/virtual/net/fc0/ctlr_0/host7/fc_host/host7")
	// A port whose name is garbage is kept without it, with the reason
	// (connect leaves it out); one without a state is skipped.
	hosttest.WriteFile(t, h.FS.Root(), "/sys/class/fc_host/host9/port_name", "bogus\n")
	hosttest.WriteFile(t, h.FS.Root(), "/sys/class/fc_host/host9/node_name", "0x1000020000000b09\n")
	hosttest.WriteFile(t, h.FS.Root(), "/sys/class/fc_host/host9/port_state", "Online\n")
	hosttest.WriteFile(t, h.FS.Root(), "/sys/class/fc_host/host11/port_name", "0x1000020000000b11\n")

	hbas, skipped, err := fc.ListHBAs(h.FS)
	require.NoError(t, err)
	require.Len(t, skipped, 1)
	var ae *fc.AttrError
	require.ErrorAs(t, skipped[0], &ae)
	require.Equal(t, "/sys/class/fc_host/host11/port_state", ae.File)
	require.Len(t, hbas, 4)
	require.Len(t, hbas[3].Unreadable, 1)
	require.Equal(t, []fc.AttrError{{File: "/sys/class/fc_host/host9/port_name", Err: hbas[3].Unreadable[0].Err}}, hbas[3].Unreadable)
	hbas[3].Unreadable = nil
	require.Equal(t, []fc.HBA{
		{Host: 5, PortName: hbaOn, NodeName: "20" + hbaOn[2:], PortState: "Online", PCI: "0000:05:00.2"},
		{Host: 6, PortName: hbaOff, NodeName: "20" + hbaOff[2:], PortState: "Linkdown", PCI: "0000:05:00.3"},
		{Host: 7, PortName: "2000020000000b01", NodeName: "1000020000000b01", PortState: "Online"},
		{Host: 9, NodeName: "1000020000000b09", PortState: "Online"},
	}, hbas)

	none, _, err := fc.ListHBAs(host.NewFS(t.TempDir()))
	require.NoError(t, err)
	require.Empty(t, none, "no /sys/class/fc_host: no HBA, no error")
}

// LUN 5 behind port A, whose SCSI target exists: brick writes "0 0 5" to
// host5 only (host6 is offline), no by-path link exists, and the device is
// found through sysfs.
func TestConnectTargetedScanNoByPath(t *testing.T) {
	h, f := realHost(t, nil)
	f.mapLUN(tgtA, 5, wwidVol)
	f.mapLUN(tgtA, 6, wwidOther) // another volume on the same port
	c := fc.New(h, quickOpts())
	dev, err := c.Connect(context.Background(), ci(t, `"target_wwn":"`+tgtA+`","target_lun":5`))
	require.NoError(t, err)
	require.Equal(t, []string{"host5 0 0 5"}, f.Scans())
	require.Equal(t, "/dev/sdb", dev.Path)
	require.Equal(t, connector.TypeBlock, dev.Type)
	require.Equal(t, fc.Protocol, dev.Protocol)
	require.Equal(t, "3600140512345678900000000000000a1", dev.WWN)
	require.Equal(t, []string{"/dev/sdb"}, dev.Paths)
	require.Equal(t, tgtA, dev.Extra[fc.ExtraTargetWWPNs])
	require.Equal(t, "5:0:0:5", dev.Extra[fc.ExtraHCTLs])
	require.NotContains(t, dev.Extra, fc.ExtraByPath)
	require.NoDirExists(t, filepath.Join(h.FS.Root(), "/sys/class/scsi_device/5:0:0:6"), "LUN 6 was never scanned")

	// Connecting again finds the device without scanning.
	dev2, err := c.Connect(context.Background(), ci(t, `"target_wwn":"`+tgtA+`","target_lun":5`))
	require.NoError(t, err)
	require.Equal(t, dev.Path, dev2.Path)
	require.Len(t, f.Scans(), 1)
}

// LUN 300 behind port B, which is only logged in (no SCSI target yet): the
// channel and target come from fc_remote_ports + scsi_target_id, and the
// by-path link (LUN in udev's 64-bit form) is reported.
func TestConnectRemotePortLUN300ByPath(t *testing.T) {
	h, f := realHost(t, nil)
	f.mapLUN(tgtB, 300, wwidVol)
	link := fc.ByPathName("", "0000:05:00.2", tgtB, 300)
	require.Equal(t, "pci-0000:05:00.2-fc-0x"+tgtB+"-lun-0x012c000000000000", link)
	// udev makes the link as soon as the disk appears. The goroutine ends
	// before the fixture tree is removed, or it could write into it while
	// t.TempDir's RemoveAll runs.
	stop, stopped := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop); <-stopped })
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			f.mu.Lock()
			var disk string
			for d, a := range f.disks {
				if a == "5:0:1:300" {
					disk = d
				}
			}
			f.mu.Unlock()
			if disk != "" {
				f.addLink(5, tgtB, 300, disk)
				return
			}
		}
	}()
	c := fc.New(h, quickOpts())
	dev, err := c.Connect(context.Background(), ci(t, `"target_wwns":["`+tgtB+`"],"target_luns":[300]`))
	require.NoError(t, err)
	require.Equal(t, []string{"host5 0 1 300"}, f.Scans())
	require.Equal(t, "/dev/sdb", dev.Path)
	require.Equal(t, "5:0:1:300", dev.Extra[fc.ExtraHCTLs])
	if l, ok := dev.Extra[fc.ExtraByPath]; ok { // the link may trail the sysfs device
		require.Equal(t, "/dev/disk/by-path/"+link, l)
	}

	paths, err := c.DevicePaths(context.Background(), ci(t, `"target_wwn":"`+tgtB+`","target_lun":300`))
	require.NoError(t, err)
	require.Equal(t, []string{"/dev/sdb"}, paths)
}

// A device that only the by-path link names (e.g. its SCSI target is not
// resolvable by port name) is still found, and checked against the port.
func TestConnectFindsByPathLink(t *testing.T) {
	h, f := realHost(t, nil)
	f.mapLUN(tgtA, 0, wwidVol)
	disk := f.addDisk(scsi.HCTL{Host: 5, Channel: 0, Target: 0, LUN: 0}, wwidVol)
	link := f.addLink(5, tgtA, 0, disk)
	// Hide the port from fc_remote_ports and fc_transport lookups by name.
	require.NoError(t, os.RemoveAll(filepath.Join(h.FS.Root(), "/sys/class/fc_remote_ports/rport-5:0-0")))
	c := fc.New(h, quickOpts())
	dev, err := c.Connect(context.Background(), ci(t, `"target_wwn":"`+tgtA+`","target_lun":0`))
	require.NoError(t, err)
	require.Equal(t, "/dev/"+disk, dev.Path)
	require.Equal(t, link, dev.Extra[fc.ExtraByPath])
	require.Empty(t, f.Scans(), "present already: nothing to scan")
}

// Without a visible target port, brick does no wildcard scan unless the
// connection info allows it.
func TestConnectWildcardOnlyWhenAllowed(t *testing.T) {
	h, f := realHost(t, nil)
	const unknownTgt = "50060160902031ff"
	// No target port ever shows up: each connect waits out the bound.
	// The wildcard scan comes on the first look and Scans answers it at
	// once, so no bound is too short for it.
	c := fc.New(h, fc.Options{SCSI: scsi.Options{DeviceTimeout: 100 * time.Millisecond}})
	_, err := c.Connect(context.Background(), ci(t, `"target_wwn":"`+unknownTgt+`","target_lun":0`))
	require.ErrorIs(t, err, fc.ErrNoDevice)
	require.ErrorIs(t, err, host.ErrWaitTimeout)
	require.Contains(t, err.Error(), "enable_wildcard_scan")
	require.Empty(t, f.Scans())

	_, err = c.Connect(context.Background(), ci(t, `"target_wwn":"`+unknownTgt+`","target_lun":0,"enable_wildcard_scan":true`))
	require.ErrorIs(t, err, fc.ErrNoDevice)
	require.Equal(t, []string{"host5 - - 0"}, f.Scans(), "one wildcard scan, on the online HBA only")
}

// A target port that logs in while brick waits is scanned then.
func TestConnectWaitsForLateLogin(t *testing.T) {
	h, f := realHost(t, nil)
	const lateTgt = "5006016090203177"
	f.mapLUN(lateTgt, 2, wwidVol)
	go func() {
		timer := time.NewTimer(100 * time.Millisecond)
		<-timer.C
		f.addRemotePort(5, 0, 7, 3, lateTgt, false)
	}()
	c := fc.New(h, quickOpts())
	dev, err := c.Connect(context.Background(), ci(t, `"target_wwn":"`+lateTgt+`","target_lun":2`))
	require.NoError(t, err)
	require.Equal(t, "5:0:3:2", dev.Extra[fc.ExtraHCTLs])
	require.Equal(t, []string{"host5 0 3 2"}, f.Scans())
}

func TestConnectNoUsableHBA(t *testing.T) {
	h, _ := realHost(t, nil)
	c := fc.New(h, quickOpts())
	// The map names only the offline HBA.
	_, err := c.Connect(context.Background(), ci(t, `"target_wwn":"`+tgtA+`","target_lun":1,"initiator_target_map":{"`+hbaOff+`":["`+tgtA+`"]}`))
	require.ErrorIs(t, err, fc.ErrNoHBA)
	require.Contains(t, err.Error(), "host6 0x"+hbaOff+" Linkdown")

	empty, _ := hosttest.New(t, nil)
	_, err = fc.New(empty, quickOpts()).Connect(context.Background(), ci(t, `"target_wwn":"`+tgtA+`","target_lun":1`))
	require.ErrorIs(t, err, fc.ErrNoHBA)
}

// multipathRunner answers multipath and multipathd like a host where
// multipathd builds dm-0 over the paths it is handed.
type multipathRunner struct {
	mu    sync.Mutex
	root  string
	t     *testing.T
	wwid  string
	paths []string
}

func (m *multipathRunner) run(_ context.Context, cmd host.Command) (host.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case cmd.Name == "multipathd" && len(cmd.Args) == 3 && hosttest.Arg(m.t, cmd, 0) == "add":
		disk := strings.TrimPrefix(hosttest.Arg(m.t, cmd, 2), "/dev/")
		m.paths = append(m.paths, disk)
		hosttest.Mkdir(m.t, m.root, "/sys/block/dm-0/slaves/"+disk)
		hosttest.WriteFile(m.t, m.root, "/sys/block/dm-0/dm/uuid", "mpath-"+m.wwid+"\n")
		hosttest.WriteFile(m.t, m.root, "/sys/block/dm-0/dm/name", m.wwid+"\n")
		hosttest.WriteFile(m.t, m.root, "/sys/block/dm-0/ro", "0\n")
		hosttest.WriteFile(m.t, m.root, "/sys/block/dm-0/dev", "254:0\n")
		hosttest.Mkdir(m.t, m.root, "/sys/block/dm-0/holders")
		hosttest.WriteFile(m.t, m.root, "/dev/dm-0", "")
		hosttest.Mkdir(m.t, m.root, "/sys/block/"+disk+"/holders/dm-0")
		return host.Result{Stdout: []byte("ok\n")}, nil
	case cmd.Name == "multipath" && len(cmd.Args) == 2 && hosttest.Arg(m.t, cmd, 0) == "-f":
		for _, d := range m.paths {
			os.Remove(filepath.Join(m.root, "/sys/block", d, "holders/dm-0"))
		}
		os.RemoveAll(filepath.Join(m.root, "/sys/block/dm-0"))
		os.Remove(filepath.Join(m.root, "/dev/dm-0"))
	}
	return host.Result{}, nil
}

// Two online HBAs, each zoned to its own target port: LUN 0 is scanned on
// both, and multipathd gets both paths after brick adds the WWID.
func TestConnectMultipathTwoHBAs(t *testing.T) {
	mr := &multipathRunner{t: t, wwid: "3600140512345678900000000000000a1"}
	runner := hosttest.NewRunner(mr.run)
	h, f := realHost(t, runner)
	mr.root = h.FS.Root()
	hosttest.WriteFile(t, mr.root, "/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.3/host6/fc_host/host6/port_state", "Online\n")
	f.addRemotePort(6, 0, 0, 0, tgtB, false)
	f.mapLUN(tgtA, 0, wwidVol)
	f.mapLUN(tgtB, 0, wwidVol)
	// multipathd runs.
	hosttest.WriteFile(t, mr.root, "/proc/42/comm", "multipathd\n")

	c := fc.New(h, fc.Options{Multipath: true, SCSI: scsi.Options{DeviceTimeout: 2 * time.Second, GoneTimeout: 2 * time.Second}})
	info := ci(t, `"target_wwns":["`+tgtA+`","`+tgtB+`"],"target_lun":0,"initiator_target_map":{"`+hbaOn+`":["`+tgtA+`"],"`+hbaOff+`":["`+tgtB+`"]}`)
	dev, err := c.Connect(context.Background(), info)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"host5 0 0 0", "host6 0 0 0"}, f.Scans(), "each HBA scans only the port the map gives it")
	require.Equal(t, "/dev/dm-0", dev.Path)
	require.Equal(t, mr.wwid, dev.MultipathID)
	require.Len(t, dev.Paths, 2)
	wwids, err := os.ReadFile(filepath.Join(mr.root, "/etc/multipath/wwids"))
	require.NoError(t, err)
	require.Contains(t, string(wwids), "/"+mr.wwid+"/\n", "the WWID went into the wwids file (written directly, not by multipath -a)")

	// Disconnect: flush the map, remove it, delete both paths, forget the WWID.
	hosttest.WriteFile(t, mr.root, "/etc/multipath/wwids", "/"+mr.wwid+"/\n")
	require.NoError(t, c.Disconnect(context.Background(), info, dev, connector.DisconnectOptions{}))
	require.ElementsMatch(t, []string{"sdb", "sdc"}, f.Deletes())
	calls := strings.Join(runner.Calls(), "\n")
	require.NotContains(t, calls, "blockdev", "the flush is the BLKFLSBUF ioctl (multipath.Teardown), no command")
	require.Contains(t, calls, "multipath -f "+mr.wwid)
	wwids, err = os.ReadFile(filepath.Join(mr.root, "/etc/multipath/wwids"))
	require.NoError(t, err)
	require.Equal(t, "#"+mr.wwid+"/\n", string(wwids), "the WWID is forgotten (commented out as multipath -w does)")
	require.NoFileExists(t, filepath.Join(mr.root, "/dev/dm-0"))
}

// A path that shows another LUN than the first is left out and, since
// brick's scan brought it in, deleted again; with no map built the volume
// falls back to the single good path.
func TestConnectDropsPathWithOtherWWID(t *testing.T) {
	h, f := realHost(t, nil)
	hosttest.WriteFile(t, h.FS.Root(), "/sys/devices/pci0000:00/0000:00:03.0/0000:05:00.3/host6/fc_host/host6/port_state", "Online\n")
	f.addRemotePort(6, 0, 0, 0, tgtA, false)
	f.mapLUN(tgtA, 4, wwidVol)
	// host6 sees another LUN 4 behind the same port name: a zoning mix-up.
	f.mu.Lock()
	f.wwidAt["6:0:0:4"] = wwidOther
	f.mu.Unlock()
	hosttest.WriteFile(t, h.FS.Root(), "/proc/42/comm", "multipathd\n")
	c := fc.New(h, fc.Options{Multipath: true, SCSI: scsi.Options{DeviceTimeout: 2 * time.Second, GoneTimeout: 2 * time.Second}, MultipathOptions: multipath.Options{MapTimeout: 100 * time.Millisecond}})
	dev, err := c.Connect(context.Background(), ci(t, `"target_wwn":"`+tgtA+`","target_lun":4`))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"host5 0 0 4", "host6 0 0 4"}, f.Scans())
	require.Len(t, dev.Paths, 1)
	require.Equal(t, dev.Paths[0], dev.Path)
	require.Equal(t, "5:0:0:4", dev.Extra[fc.ExtraHCTLs])
	require.Len(t, f.Deletes(), 1, "the foreign path brick scanned in is deleted again")
}

func TestDisconnectSinglePath(t *testing.T) {
	runner := hosttest.NewRunner(nil)
	h, f := realHost(t, runner)
	f.mapLUN(tgtA, 5, wwidVol)
	f.mapLUN(tgtA, 6, wwidOther)
	c := fc.New(h, quickOpts())
	vol := ci(t, `"target_wwn":"`+tgtA+`","target_lun":5`)
	other := ci(t, `"target_wwn":"`+tgtA+`","target_lun":6`)
	dev, err := c.Connect(context.Background(), vol)
	require.NoError(t, err)
	otherDev, err := c.Connect(context.Background(), other)
	require.NoError(t, err)
	disk := strings.TrimPrefix(dev.Path, "/dev/")

	// Mounted: refused, nothing deleted.
	hosttest.WriteFile(t, h.FS.Root(), "/proc/self/mountinfo", "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n40 22 8:32 / /mnt/vol rw - ext4 "+dev.Path+" rw\n")
	err = c.Disconnect(context.Background(), vol, dev, connector.DisconnectOptions{})
	require.ErrorIs(t, err, host.ErrDeviceBusy)
	require.Contains(t, err.Error(), "/mnt/vol")
	require.Empty(t, f.Deletes())

	// Forced: flushed and deleted anyway.
	require.NoError(t, c.Disconnect(context.Background(), vol, dev, connector.DisconnectOptions{Force: true}))
	require.Equal(t, []string{disk}, f.Deletes())
	require.NotContains(t, strings.Join(runner.Calls(), "\n"), "blockdev --flushbufs", "the flush is the BLKFLSBUF ioctl (multipath.Teardown), no command")
	require.NoFileExists(t, filepath.Join(h.FS.Root(), dev.Path))
	require.FileExists(t, filepath.Join(h.FS.Root(), otherDev.Path), "the other LUN on the same port is untouched")

	// Idempotent: gone is success, and nothing runs.
	n := len(runner.Calls())
	require.NoError(t, c.Disconnect(context.Background(), vol, dev, connector.DisconnectOptions{}))
	require.NoError(t, c.Disconnect(context.Background(), vol, nil, connector.DisconnectOptions{}))
	require.Len(t, runner.Calls(), n)
}

// A LUN number that now shows another volume is left alone.
func TestDisconnectChecksWWN(t *testing.T) {
	h, f := realHost(t, nil)
	f.mapLUN(tgtA, 5, wwidOther)
	c := fc.New(h, quickOpts())
	vol := ci(t, `"target_wwn":"`+tgtA+`","target_lun":5`)
	_, err := c.Connect(context.Background(), vol)
	require.NoError(t, err)
	stale := &connector.Device{Path: "/dev/sdb", WWN: "3600140512345678900000000000000a1", Paths: []string{"/dev/sdb"}}
	require.NoError(t, c.Disconnect(context.Background(), vol, stale, connector.DisconnectOptions{}))
	require.Empty(t, f.Deletes())
}

func TestConnectReadOnly(t *testing.T) {
	runner := hosttest.NewRunner(nil)
	h, f := realHost(t, runner)
	f.mapLUN(tgtA, 0, wwidVol)
	dev, err := fc.New(h, quickOpts()).Connect(context.Background(), ci(t, `"target_wwn":"`+tgtA+`","target_lun":0,"access_mode":"ro"`))
	require.NoError(t, err)
	require.Equal(t, "true", dev.Extra[fc.ExtraReadOnly])
	require.Contains(t, runner.Calls(), "blockdev --setro "+dev.Path)
}

func TestConnectRejectsBeforeTouchingHost(t *testing.T) {
	runner := hosttest.NewRunner(func(context.Context, host.Command) (host.Result, error) {
		return host.Result{}, errors.New("must not run")
	})
	h, f := realHost(t, runner)
	_, err := fc.New(h, quickOpts()).Connect(context.Background(), ci(t, `"target_wwn":"-rf","target_lun":0`))
	require.ErrorIs(t, err, connector.ErrInvalid)
	require.Empty(t, f.Scans())
	require.Empty(t, runner.Calls())
}

// Without multipath asked for, multipathd takes the disk on its own
// (find_multipaths greedy, and udev marks it a multipath path): brick waits
// for the map multipathd builds after the disk shows, the map becomes the
// volume's device, brick runs no multipath command, and detach flushes it.
func TestConnectSinglePathClaimedByMultipathd(t *testing.T) {
	mr := &multipathRunner{t: t, wwid: "3600140512345678900000000000000a1"}
	runner := hosttest.NewRunner(mr.run)
	h, f := realHost(t, runner)
	root := h.FS.Root()
	mr.root = root
	f.mapLUN(tgtA, 0, wwidVol)
	hosttest.WriteFile(t, root, "/proc/42/comm", "multipathd\n")
	hosttest.WriteFile(t, root, "/etc/multipath.conf", "defaults {\n\tfind_multipaths greedy\n}\n")
	hosttest.WriteFile(t, root, "/run/udev/control", "")
	for _, minor := range []string{"16", "32", "48"} {
		hosttest.WriteFile(t, root, "/run/udev/data/b8:"+minor, "E:DM_MULTIPATH_DEVICE_PATH=1\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // multipathd: builds the map over the disk once it shows
		for ctx.Err() == nil {
			if disks, _ := filepath.Glob(filepath.Join(root, "/sys/block/sd*")); len(disks) > 0 {
				_, _ = mr.run(ctx, host.Command{Name: "multipathd", Args: []string{"add", "path", "/dev/" + filepath.Base(disks[0])}})
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	c := fc.New(h, fc.Options{SCSI: scsi.Options{DeviceTimeout: 2 * time.Second, GoneTimeout: 2 * time.Second}, MultipathOptions: multipath.Options{MapTimeout: 10 * time.Second}})
	info := ci(t, `"target_wwn":"`+tgtA+`","target_lun":0`)
	dev, err := c.Connect(ctx, info)
	require.NoError(t, err)
	require.Equal(t, "/dev/dm-0", dev.Path)
	require.Equal(t, mr.wwid, dev.MultipathID)
	require.Equal(t, mr.wwid, dev.Extra[fc.ExtraDMName])
	require.Len(t, dev.Paths, 1)
	require.Empty(t, runner.Calls(), "brick asked multipathd for nothing")

	require.NoError(t, c.Disconnect(context.Background(), info, dev, connector.DisconnectOptions{}))
	require.Len(t, f.Deletes(), 1)
	require.Contains(t, strings.Join(runner.Calls(), "\n"), "multipath -f "+mr.wwid)
	require.NoFileExists(t, filepath.Join(root, "/dev/dm-0"))
}
