package attach

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
	"github.com/brick-storage/brick/rollback"
)

const volID = "11111111-1111-4111-8111-111111111111"

// fakeConnector tracks what is connected.
type fakeConnector struct {
	mu            sync.Mutex
	connected     map[string]bool // by target_iqn
	connectErr    error
	disconnectErr error
	disconnects   []connector.DisconnectOptions
	// device is what Connect returns ("" = an iSCSI disk, /dev/sdx).
	device *connector.Device
}

func (f *fakeConnector) Connect(_ context.Context, info connector.ConnectionInfo) (*connector.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	iqn, err := info.RequiredString("target_iqn")
	if err != nil {
		return nil, err
	}
	if f.connectErr != nil {
		return nil, f.connectErr
	}
	f.connected[iqn] = true
	if f.device != nil {
		d := *f.device
		return &d, nil
	}
	return &connector.Device{Path: "/dev/sdx", Type: connector.TypeBlock, Protocol: "iscsi", WWN: "360000000000000000e00000000010001"}, nil
}

func (f *fakeConnector) Disconnect(_ context.Context, info connector.ConnectionInfo, _ *connector.Device, o connector.DisconnectOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.disconnects = append(f.disconnects, o)
	if f.disconnectErr != nil && !o.Force {
		return f.disconnectErr
	}
	iqn, _ := info.RequiredString("target_iqn")
	delete(f.connected, iqn)
	return nil
}

func (f *fakeConnector) DevicePaths(_ context.Context, info connector.ConnectionInfo) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	iqn, _ := info.RequiredString("target_iqn")
	if f.connected[iqn] {
		return []string{"/dev/sdx"}, nil
	}
	return nil, nil
}

func (f *fakeConnector) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.connected)
}

type fixture struct {
	t      *testing.T
	fake   *cindertest.Server
	conn   *fakeConnector
	runner *hosttest.Runner
	host   *host.Host
	root   string
	mv     string
	// mounted is the fake mount table the runner keeps.
	mounts map[string]string
	blank  bool
	fsType string // what blkid finds when not blank ("" = ext4)
}

func newFixture(t *testing.T, mv string) *fixture {
	f := &fixture{t: t, fake: cindertest.New(t), conn: &fakeConnector{connected: map[string]bool{}}, mv: mv, mounts: map[string]string{}, blank: true}
	f.fake.AddVolume(volID, "data")
	f.runner = hosttest.NewRunner(f.run)
	f.host, f.root = hosttest.New(t, f.runner)
	hosttest.WriteFile(t, f.root, "/etc/iscsi/initiatorname.iscsi", "InitiatorName=iqn.1993-08.org.debian:01:test\n")
	hosttest.WriteFile(t, f.root, "/proc/sys/kernel/hostname", "node1\n")
	f.writeMountinfo()
	// The fake connector's device: a fresh volume, all zeros.
	dev := filepath.Join(f.root, "dev", "sdx")
	require.NoError(t, os.MkdirAll(filepath.Dir(dev), 0o755))
	require.NoError(t, os.WriteFile(dev, nil, 0o600))
	require.NoError(t, os.Truncate(dev, 4<<20))
	return f
}

func (f *fixture) writeMountinfo() {
	var b strings.Builder
	b.WriteString("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
	i := 30
	for mp, dev := range f.mounts {
		fmt.Fprintf(&b, "%d 22 8:16 / %s rw,relatime - ext4 %s rw\n", i, mp, dev)
		i++
	}
	hosttest.WriteFile(f.t, f.root, "/proc/self/mountinfo", b.String())
}

// run scripts blkid, mkfs, mount and umount.
func (f *fixture) run(_ context.Context, cmd host.Command) (host.Result, error) {
	switch cmd.Name {
	case "blkid":
		if f.blank {
			return host.Result{ExitCode: 2}, nil
		}
		t := f.fsType
		if t == "" {
			t = "ext4"
		}
		return host.Result{Stdout: []byte("TYPE=" + t + "\nUSAGE=filesystem\n")}, nil
	case "mkfs.ext4", "mkfs.xfs":
		f.blank, f.fsType = false, strings.TrimPrefix(cmd.Name, "mkfs.")
		return host.Result{}, nil
	case "mount":
		f.mounts[hosttest.Arg(f.t, cmd, -1)] = hosttest.Arg(f.t, cmd, -2)
		f.writeMountinfo()
		return host.Result{}, nil
	case "umount":
		delete(f.mounts, hosttest.Arg(f.t, cmd, -1))
		f.writeMountinfo()
		return host.Result{}, nil
	}
	return host.Result{}, fmt.Errorf("unexpected command %v", cmd.Argv())
}

func (f *fixture) manager() *Manager {
	c, err := cinderapi.NewClient(context.Background(), f.fake.ServiceClient(), f.mv)
	require.NoError(f.t, err)
	reg := connector.NewRegistry()
	reg.Register(f.conn, "iscsi")
	return &Manager{Host: f.host, Cinder: c, Connectors: reg}
}

// requireClean asserts the volume is available with nothing left anywhere.
func (f *fixture) requireClean() {
	f.t.Helper()
	st, n := f.fake.Status(volID)
	require.Equal(f.t, "available", st)
	require.Zero(f.t, n, "attachments left")
	require.Zero(f.t, f.fake.Exports(), "exports left")
	require.Zero(f.t, f.conn.count(), "devices left")
	require.Empty(f.t, f.mounts, "mounts left")
	_, err := os.Stat(filepath.Join(f.root, DefaultStateDir, volID+".json"))
	require.True(f.t, os.IsNotExist(err), "record left")
}

func TestAttachDetach(t *testing.T) {
	for _, mv := range []string{"", "3.44", "3.0"} {
		t.Run("mv="+mv, func(t *testing.T) {
			f := newFixture(t, mv)
			m := f.manager()
			rec, err := m.Attach(context.Background(), AttachOptions{Volume: "data"})
			require.NoError(t, err)
			require.Equal(t, "/dev/sdx", rec.Device.Path)
			require.NotEmpty(t, rec.AttachmentID)
			require.Equal(t, PhaseAttached, rec.Phase)
			st, _ := f.fake.Status(volID)
			require.Equal(t, "in-use", st)

			p := filepath.Join(f.root, DefaultStateDir, volID+".json")
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NotContains(t, string(data), "chap-SECRET-pw")
			require.Equal(t, "***", f.host.Redactor.Redact("chap-SECRET-pw"))

			paths, err := m.VolumePaths(context.Background(), "data", connector.GatherOptions{})
			require.NoError(t, err)
			require.Equal(t, []string{"/dev/sdx"}, paths)
			all, errs := m.AllVolumePaths(context.Background(), "iscsi")
			require.Empty(t, errs)
			require.Len(t, all, 1)
			list, errs := m.List(context.Background())
			require.Empty(t, errs)
			require.Len(t, list, 1)
			require.Equal(t, "in-use", list[0].CinderStatus)

			_, err = m.Attach(context.Background(), AttachOptions{Volume: volID})
			require.ErrorContains(t, err, "already has a local record")

			require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID}))
			f.requireClean()
			err = m.Detach(context.Background(), DetachOptions{Volume: volID})
			require.ErrorIs(t, err, ErrNotAttached)
		})
	}
}

func TestAttachRollback(t *testing.T) {
	for _, tc := range []struct {
		name, mv string
		setup    func(f *fixture)
		wantErr  string
	}{
		{"connect fails v3", "", func(f *fixture) { f.conn.connectErr = errors.New("iscsi login: target unreachable") },
			"local-attach data: connect: iscsi login: target unreachable"},
		{"connect fails legacy", "3.0", func(f *fixture) {
			f.conn.connectErr = errors.Join(errors.New("path 1: no device"), errors.New("path 2:\nlogin failed"))
		},
			"local-attach data: connect: path 1: no device; path 2:; login failed"},
		{"complete fails v3", "", func(f *fixture) {
			f.fake.Fail("attachment-complete", cindertest.Fault{Status: 500, Body: `{"computeFault":{"message":"db down"}}`})
		}, "local-attach data: cinder attachment complete volume " + volID + ": db down (HTTP 500)"},
		{"os-attach fails legacy", "3.0", func(f *fixture) {
			f.fake.Fail("os-attach", cindertest.Fault{Status: 503, Body: `{}`})
		}, "local-attach data: cinder attach volume " + volID + ": cinder unavailable (HTTP 503)"},
		{"export fails v3", "", func(f *fixture) {
			f.fake.Fail("attachment-update", cindertest.Fault{Status: 500, Body: `{"computeFault":{"message":"boom"}}`})
		}, "boom"},
		{"export fails legacy", "3.0", func(f *fixture) {
			f.fake.Fail("os-initialize_connection", cindertest.Fault{Status: 500, Body: `{"computeFault":{"message":"boom"}}`})
		}, "boom"},
		{"unsupported protocol", "", func(f *fixture) {
			f.fake.ConnectionInfo = func(string, map[string]any) map[string]any {
				return map[string]any{"driver_volume_type": "scaleio", "target_iqn": "x"}
			}
		}, `unsupported driver_volume_type "scaleio"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.mv)
			tc.setup(f)
			_, err := f.manager().Attach(context.Background(), AttachOptions{Volume: "data"})
			require.ErrorContains(t, err, tc.wantErr)
			require.NotContains(t, err.Error(), "\n")
			f.requireClean()
		})
	}
}

func TestAttachMountAndMkfs(t *testing.T) {
	f := newFixture(t, "")
	m := f.manager()
	rec, err := m.Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: "/mnt/data", Mkfs: "ext4"})
	require.NoError(t, err)
	require.True(t, rec.Mounted)
	require.Equal(t, "ext4", rec.Formatted)
	require.Equal(t, "/dev/sdx", f.mounts["/mnt/data"])
	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: "data"}))
	f.requireClean()

	// Second attach: the device has a filesystem now, so no mkfs.
	before := len(f.runner.Calls())
	rec, err = m.Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: "/mnt/data", Mkfs: "ext4"})
	require.NoError(t, err)
	require.Empty(t, rec.Formatted)
	for _, c := range f.runner.Calls()[before:] {
		require.NotContains(t, c, "mkfs")
	}
	require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: "data"}))
	f.requireClean()

	// A failing mount is rolled back.
	f.runner = hosttest.NewRunner(func(ctx context.Context, cmd host.Command) (host.Result, error) {
		if cmd.Name == "mount" {
			return host.Result{}, hosttest.Fail(cmd, 32, "mount: wrong fs type")
		}
		return f.run(ctx, cmd)
	})
	f.host.Runner = f.runner
	_, err = m.Attach(context.Background(), AttachOptions{Volume: "data", Mountpoint: "/mnt/data"})
	require.ErrorContains(t, err, "local-attach data: mount: mount /dev/sdx on /mnt/data")
	f.requireClean()

	for _, bad := range []AttachOptions{
		{Volume: "data", Mountpoint: "relative"},
		{Volume: "data", Mountpoint: "/"},
		{Volume: "data", Mountpoint: "/mnt/../etc"},
		{Volume: "data", Mountpoint: "/mnt/x", Mkfs: "-rf"},
		{Volume: "data", Mkfs: "ext4"},
		{Volume: "data", Mode: "rx"},
	} {
		_, err := m.Attach(context.Background(), bad)
		require.Error(t, err, bad)
	}
	f.requireClean()
}

func TestAttachInUseElsewhere(t *testing.T) {
	for _, mv := range []string{"", "3.0"} {
		f := newFixture(t, mv)
		f.fake.SetStatus(volID, "in-use")
		_, err := f.manager().Attach(context.Background(), AttachOptions{Volume: volID})
		require.ErrorIs(t, err, apierr.ErrInvalidState)
		require.ErrorContains(t, err, "local-attach "+volID+": cinder ")
		st, _ := f.fake.Status(volID)
		require.Equal(t, "in-use", st, "someone else's attachment is left alone")
		for _, op := range f.fake.Ops() {
			require.NotEqual(t, "os-unreserve", op)
		}
	}
}

func TestDetachBusy(t *testing.T) {
	for _, tc := range []struct {
		mv   string
		err  error
		want string
	}{
		{"", fmt.Errorf("flush /dev/sdx: %w", host.ErrDeviceBusy), "flush /dev/sdx"},
		{"3.0", fmt.Errorf("flush /dev/sdx: %w", host.ErrDeviceBusy), "flush /dev/sdx"},
		// The flush's deadline cut its last try short: no "in use" left.
		{"", fmt.Errorf("iscsi disconnect: %w", host.FlushFailed(fmt.Errorf("multipath flush 3600 (dm-0) after 8 attempts: %w (last: multipath -f 3600: timed out after 10s: %w)",
			host.ErrWaitTimeout, context.DeadlineExceeded))), "iscsi disconnect: multipath flush 3600"},
	} {
		mv := tc.mv
		f := newFixture(t, mv)
		m := f.manager()
		_, err := m.Attach(context.Background(), AttachOptions{Volume: volID})
		require.NoError(t, err)
		f.conn.disconnectErr = tc.err
		err = m.Detach(context.Background(), DetachOptions{Volume: volID})
		require.ErrorIs(t, err, ErrInUse)
		require.ErrorContains(t, err, "local-detach "+volID+": disconnect: "+tc.want)
		require.ErrorContains(t, err, "or use --force")
		st, _ := f.fake.Status(volID)
		require.Equal(t, "in-use", st, "roll_detaching put it back")
		rec, err := m.Record(volID)
		require.NoError(t, err)
		require.Equal(t, PhaseAttached, rec.Phase)

		require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID, Force: true}))
		f.requireClean()
	}
}

// TestDetachWithoutRecord: without brick's record the detach acts on the
// LUN Cinder's connection info names, which may hold another volume: the
// device there must carry the WWID the connection info gives, or --force.
func TestDetachWithoutRecord(t *testing.T) {
	const diskWWID = "naa.60000000000000000e00000000010001"
	for _, tc := range []struct {
		name  string
		wwn   string // the connection info's "wwn"; "" none
		force bool
		want  string // "" = detached
	}{
		{"wwid matches", "360000000000000000E00000000010001", false, ""},
		{"wwid matches (naa. form)", diskWWID, false, ""},
		{"no wwid in the connection info", "", false, "local-detach " + volID + ": brick has no record of this attachment, and at the LUN Cinder names /dev/sdx has WWID 360000000000000000e00000000010001, but Cinder's connection info gives no WWID to check it against: that LUN may hold another volume; if it is this volume, run again with --force"},
		{"another volume's wwid", "3624a93700000000000000000000000aa", false, "/dev/sdx has WWID 360000000000000000e00000000010001, but Cinder's connection info says the volume's WWID is 3624a93700000000000000000000000aa (wwn)"},
		{"no wwid, forced", "", true, ""},
		{"another wwid, forced", "3624a93700000000000000000000000aa", true, ""},
	} {
		for _, mv := range []string{"", "3.0"} {
			t.Run(tc.name+"/"+mv, func(t *testing.T) {
				f := newFixture(t, mv)
				hosttest.WriteFile(t, f.root, "/sys/block/sdx/device/wwid", diskWWID+"\n")
				if tc.wwn != "" {
					f.fake.ConnectionInfo = func(id string, conn map[string]any) map[string]any {
						ci := cindertest.DefaultConnectionInfo(id, conn)
						ci["wwn"] = tc.wwn
						return ci
					}
				}
				m := f.manager()
				_, err := m.Attach(context.Background(), AttachOptions{Volume: volID})
				require.NoError(t, err)
				require.NoError(t, os.Remove(filepath.Join(f.root, DefaultStateDir, volID+".json")))
				paths, err := m.VolumePaths(context.Background(), volID, connector.GatherOptions{})
				require.NoError(t, err)
				require.Equal(t, []string{"/dev/sdx"}, paths)
				require.ErrorContains(t, m.Detach(context.Background(), DetachOptions{Volume: volID, AttachmentID: "nope"}), "has no attachment nope")
				err = m.Detach(context.Background(), DetachOptions{Volume: volID, Force: tc.force})
				if tc.want != "" {
					require.ErrorContains(t, err, tc.want)
					st, _ := f.fake.Status(volID)
					require.Equal(t, "in-use", st, "left attached")
					require.Equal(t, 1, f.conn.count(), "device left alone")
					require.Empty(t, f.conn.disconnects)
					return
				}
				require.NoError(t, err)
				f.requireClean()
			})
		}
	}
}

func TestDetachCinderFailsThenFinish(t *testing.T) {
	f := newFixture(t, "")
	m := f.manager()
	_, err := m.Attach(context.Background(), AttachOptions{Volume: volID})
	require.NoError(t, err)
	f.fake.Fail("attachment-delete", cindertest.Fault{Status: 503, Body: "{}", Times: 1})
	err = m.Detach(context.Background(), DetachOptions{Volume: volID})
	require.ErrorContains(t, err, "run brick local-detach "+volID+" again or brick cleanup")
	rec, err := m.Record(volID)
	require.NoError(t, err)
	require.Equal(t, PhaseDetaching, rec.Phase)
	res, err := m.Cleanup(context.Background(), "", false)
	require.NoError(t, err)
	require.Equal(t, "finished", res[0].Action)
	f.requireClean()
}

// crash simulates kill -9 at a step: the step trace panics, nothing is
// undone.
type crash struct{ step string }

func crashAt(step string) func(string) {
	return func(s string) {
		if s == step {
			panic(crash{s})
		}
	}
}

func TestCrashThenCleanup(t *testing.T) {
	steps := []string{StepReserve, StepExport, StepConnect, StepComplete, StepMkfs, StepMount, StepDone}
	for _, mv := range []string{"", "3.0"} {
		for _, step := range steps {
			step, mv := step, mv
			t.Run(mv+"/"+step, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, mv)
				m := f.manager()
				ctx := rollback.WithTrace(context.Background(), crashAt(step))
				var attachErr error
				func() {
					defer func() {
						r := recover()
						_, ok := r.(crash)
						// The error says why, should the attach end before the step.
						require.True(t, ok, "crashed at %s: %v (attach error: %v)", step, r, attachErr)
					}()
					_, attachErr = m.Attach(ctx, AttachOptions{Volume: volID, Mountpoint: "/mnt/d", Mkfs: "ext4"})
				}()
				// A crash after "done" was recorded is an attached volume.
				m2 := f.manager()
				res, err := m2.Cleanup(context.Background(), volID, false)
				require.NoError(t, err)
				require.Len(t, res, 1)
				if step == StepDone {
					require.Equal(t, "none", res[0].Action)
					require.NoError(t, m2.Detach(context.Background(), DetachOptions{Volume: volID}))
				} else {
					require.Equal(t, "undone", res[0].Action, res[0])
				}
				f.requireClean()
			})
		}
	}
}

func TestCrashDuringDetachThenCleanup(t *testing.T) {
	for _, mv := range []string{"", "3.0"} {
		for _, step := range []string{StepUnmount, StepBeginDetach, StepDisconnect, StepCinderDetach, StepDone} {
			t.Run(mv+"/"+step, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, mv)
				f.blank = false // holds ext4
				m := f.manager()
				_, err := m.Attach(context.Background(), AttachOptions{Volume: volID, Mountpoint: "/mnt/d"})
				require.NoError(t, err)
				ctx := rollback.WithTrace(context.Background(), crashAt(step))
				func() {
					defer func() { _, ok := recover().(crash); require.True(t, ok) }()
					_ = m.Detach(ctx, DetachOptions{Volume: volID})
				}()
				res, err := f.manager().Cleanup(context.Background(), "", false)
				require.NoError(t, err)
				require.Equal(t, "finished", res[0].Action)
				f.requireClean()
			})
		}
	}
}

func TestOrphanAttachmentCleanup(t *testing.T) {
	// kill -9 inside attachment create: Cinder made the attachment, brick
	// never learnt its ID.
	f := newFixture(t, "")
	m := f.manager()
	ctx := rollback.WithTrace(context.Background(), crashAt(StepExport))
	func() {
		defer func() { recover() }()
		_, _ = m.Attach(ctx, AttachOptions{Volume: volID})
	}()
	rec, err := m.Record(volID)
	require.NoError(t, err)
	rec.AttachmentID = ""
	rec.Step = StepReserve
	require.NoError(t, m.store().save(rec))
	res, err := f.manager().Cleanup(context.Background(), volID, false)
	require.NoError(t, err)
	require.Equal(t, "undone", res[0].Action)
	f.requireClean()
}

func TestCorruptRecord(t *testing.T) {
	f := newFixture(t, "")
	m := f.manager()
	hosttest.WriteFile(t, f.root, filepath.Join(DefaultStateDir, volID+".json"), "{not json")
	_, err := m.Attach(context.Background(), AttachOptions{Volume: volID})
	require.ErrorIs(t, err, ErrCorruptRecord)
	err = m.Detach(context.Background(), DetachOptions{Volume: volID})
	require.ErrorIs(t, err, ErrCorruptRecord)
	_, errs := m.List(context.Background())
	require.Len(t, errs, 1)
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"version":1,"volume_id":"` + volID + `","phase":"attached","flow":"v3","connection_info":{"driver_volume_type":"iscsi","data":{"target_lun":1}}}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseRecord("/var/lib/brick/volumes/"+volID+".json", data)
		if err == nil {
			if r.VolumeID != volID || (r.Phase != PhaseAttached && r.Phase != PhaseAttaching && r.Phase != PhaseDetaching) {
				t.Fatalf("accepted %+v", r)
			}
		} else if !errors.Is(err, ErrCorruptRecord) {
			t.Fatalf("error %v is not ErrCorruptRecord", err)
		}
	})
}

func TestDetachUsesRecordFlow(t *testing.T) {
	f := newFixture(t, "3.0")
	_, err := f.manager().Attach(context.Background(), AttachOptions{Volume: volID})
	require.NoError(t, err)
	f.mv = "" // detach with a client that negotiates the v3 flow
	require.NoError(t, f.manager().Detach(context.Background(), DetachOptions{Volume: volID}))
	f.requireClean()
	require.Contains(t, f.fake.Ops(), "os-detach", "the legacy flow the volume was attached with")
	require.NotContains(t, f.fake.Ops(), "attachment-delete")
}
