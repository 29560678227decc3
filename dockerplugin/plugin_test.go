package dockerplugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// fakeCinder holds volumes by ID.
type fakeCinder struct {
	mu      sync.Mutex
	vols    map[string]*cinderapi.Volume
	n       int
	creates int
	deletes []string
	failOp  string
}

func newFakeCinder() *fakeCinder { return &fakeCinder{vols: map[string]*cinderapi.Volume{}} }

func (c *fakeCinder) add(name, status string) *cinderapi.Volume {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	v := &cinderapi.Volume{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", c.n), Name: name, Status: status, Size: 1}
	if status == "in-use" {
		v.Attachments = []volumes.Attachment{{HostName: "other-host"}}
	}
	c.vols[v.ID] = v
	return v
}

func (c *fakeCinder) FindVolume(_ context.Context, ref string) (*cinderapi.Volume, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, v := range c.vols {
		if v.ID == ref || v.Name == ref {
			cp := *v
			return &cp, nil
		}
	}
	return nil, &apierr.Error{Service: cinderapi.Service, Op: "find", Volume: ref, Kind: apierr.ErrNotFound, Message: "no volume with this ID or name"}
}

func (c *fakeCinder) Volume(ctx context.Context, id string) (*cinderapi.Volume, error) {
	return c.FindVolume(ctx, id)
}

func (c *fakeCinder) CreateVolume(_ context.Context, o cinderapi.CreateVolumeOpts, _ time.Duration) (*cinderapi.Volume, error) {
	if c.failOp == "create" {
		return nil, &apierr.Error{Service: cinderapi.Service, Op: "create", Volume: o.Name, Kind: apierr.ErrInvalid, Message: "quota exceeded"}
	}
	c.creates++
	return c.add(o.Name, "available"), nil
}

func (c *fakeCinder) DeleteVolume(_ context.Context, id string, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.vols[id]; v != nil && v.Status != "available" {
		return &apierr.Error{Service: cinderapi.Service, Op: "delete", Volume: id, Kind: apierr.ErrInvalidState, Message: "volume is " + v.Status}
	}
	delete(c.vols, id)
	c.deletes = append(c.deletes, id)
	return nil
}

// fakeAttacher attaches by flipping the Cinder status and a mount table.
type fakeAttacher struct {
	mu       sync.Mutex
	cinder   *fakeCinder
	recs     map[string]*attach.Record
	mounted  map[string]bool
	attaches int
	detaches int
	cleanups int
	failNext error
}

func (a *fakeAttacher) Attach(_ context.Context, o attach.AttachOptions) (*attach.Record, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failNext != nil {
		err := a.failNext
		a.failNext = nil
		return nil, err
	}
	if a.recs[o.Volume] != nil {
		return nil, fmt.Errorf("local-attach %s: already attached", o.Volume)
	}
	a.attaches++
	rec := &attach.Record{VolumeID: o.Volume, Phase: attach.PhaseAttached, Mountpoint: o.Mountpoint, Mounted: true, Formatted: o.Mkfs,
		Device: &connector.Device{Path: "/dev/dm-0", Protocol: "iscsi", WWN: "36001405abc"}}
	a.recs[o.Volume] = rec
	a.mounted[o.Mountpoint] = true
	a.cinder.vols[o.Volume].Status = "in-use"
	return rec, nil
}

func (a *fakeAttacher) Detach(_ context.Context, o attach.DetachOptions) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	rec := a.recs[o.Volume]
	if rec == nil {
		return attach.ErrNotAttached
	}
	a.detaches++
	delete(a.recs, o.Volume)
	delete(a.mounted, rec.Mountpoint)
	a.cinder.vols[o.Volume].Status = "available"
	return nil
}

func (a *fakeAttacher) Record(ref string) (*attach.Record, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r := a.recs[ref]; r != nil {
		cp := *r
		return &cp, nil
	}
	return nil, attach.ErrNoRecord
}

func (a *fakeAttacher) Cleanup(_ context.Context, ref string, _ bool) ([]attach.CleanupResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cleanups++
	delete(a.recs, ref)
	a.cinder.vols[ref].Status = "available"
	return nil, nil
}

func (a *fakeAttacher) isMounted(dir string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mounted[dir], nil
}

type fixture struct {
	h      *host.Host
	cinder *fakeCinder
	att    *fakeAttacher
	cfg    Config
}

func newFixture(t *testing.T) *fixture {
	root := t.TempDir()
	c := newFakeCinder()
	return &fixture{
		h:      host.New(root, nil, nil),
		cinder: c,
		att:    &fakeAttacher{cinder: c, recs: map[string]*attach.Record{}, mounted: map[string]bool{}},
		cfg:    Config{StateDir: "/state", MaxSizeGiB: 100},
	}
}

// plugin builds a plugin over the fixture, as a (re)started process would.
func (f *fixture) plugin(t *testing.T) *Plugin {
	p, err := New(f.h, f.att, f.cinder, f.cfg)
	require.NoError(t, err)
	p.mounted = f.att.isMounted
	return p
}

func TestCreateOptions(t *testing.T) {
	tests := []struct {
		name    string
		vol     string
		opts    map[string]string
		wantErr string
	}{
		{name: "defaults", vol: "v1"},
		{name: "all options", vol: "v1", opts: map[string]string{"size": "2", "type": "fast", "availability_zone": "nova", "fs": "xfs"}},
		{name: "size with unit", vol: "v1", opts: map[string]string{"size": "3GiB"}},
		{name: "unknown option", vol: "v1", opts: map[string]string{"sise": "1"}, wantErr: `unknown option "sise": brick takes size, type`},
		{name: "size zero", vol: "v1", opts: map[string]string{"size": "0"}, wantErr: "want a whole number of GiB from 1 to 100"},
		{name: "size negative", vol: "v1", opts: map[string]string{"size": "-1"}, wantErr: "from 1 to 100"},
		{name: "size huge", vol: "v1", opts: map[string]string{"size": "99999999999999999999"}, wantErr: "from 1 to 100"},
		{name: "size over max", vol: "v1", opts: map[string]string{"size": "101"}, wantErr: "from 1 to 100"},
		{name: "size not a number", vol: "v1", opts: map[string]string{"size": "1.5"}, wantErr: "whole number"},
		{name: "bad fs", vol: "v1", opts: map[string]string{"fs": "btrfs"}, wantErr: "want ext4 or xfs"},
		{name: "control bytes in value", vol: "v1", opts: map[string]string{"type": "a\nb"}, wantErr: "control characters"},
		{name: "adopt with size", vol: "v1", opts: map[string]string{"volume": "x", "size": "1"}, wantErr: "size, type and availability_zone do not apply"},
		{name: "adopt empty", vol: "v1", opts: map[string]string{"volume": ""}, wantErr: "name a Cinder volume"},
		{name: "dot dot name", vol: "../x", wantErr: "volume name \"../x\": use letters"},
		{name: "slash name", vol: "a/b", wantErr: "use letters"},
		{name: "odd bytes name", vol: "v\x00\xff", wantErr: "use letters"},
		{name: "empty name", vol: "", wantErr: "volume name is empty"},
		{name: "long name", vol: strings.Repeat("a", MaxNameLen+1), wantErr: "longer than 128"},
		{name: "dot name", vol: ".", wantErr: "use letters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.plugin(t)
			err := p.Create(context.Background(), tt.vol, tt.opts)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Zero(t, f.cinder.creates, "nothing created")
				require.Empty(t, p.List())
				return
			}
			require.NoError(t, err)
			require.Equal(t, 1, f.cinder.creates)
			require.Equal(t, []Info{{Name: tt.vol}}, p.List())
		})
	}
}

func TestAdopt(t *testing.T) {
	f := newFixture(t)
	p := f.plugin(t)
	ctx := context.Background()
	free := f.cinder.add("free", "available")
	busy := f.cinder.add("busy", "in-use")

	err := p.Create(ctx, "b", map[string]string{"volume": "busy"})
	require.ErrorContains(t, err, "is in-use (attached to other-host): refusing to adopt a volume in use elsewhere")
	require.ErrorContains(t, p.Create(ctx, "m", map[string]string{"volume": "missing"}), "no volume with this ID or name")

	require.NoError(t, p.Create(ctx, "a", map[string]string{"volume": free.ID}))
	require.ErrorContains(t, p.Create(ctx, "a2", map[string]string{"volume": "free"}), "is brick volume a already")
	require.Equal(t, []Info{{Name: "a"}}, p.List())
	require.Zero(t, f.cinder.creates)

	// Remove forgets an adopted volume but never deletes it in Cinder.
	require.NoError(t, p.Remove(ctx, "a"))
	require.Empty(t, f.cinder.deletes)
	require.Contains(t, f.cinder.vols, free.ID)
	require.Equal(t, "in-use", f.cinder.vols[busy.ID].Status)
}

func TestCreateExistingName(t *testing.T) {
	f := newFixture(t)
	p := f.plugin(t)
	ctx := context.Background()
	require.NoError(t, p.Create(ctx, "v1", map[string]string{"size": "1"}))
	require.NoError(t, p.Create(ctx, "v1", nil), "docker run -v v1: creates again without options")
	require.ErrorContains(t, p.Create(ctx, "v1", map[string]string{"size": "2"}), "exists already")
	require.Equal(t, 1, f.cinder.creates)
}

func TestMountRefcount(t *testing.T) {
	f := newFixture(t)
	p := f.plugin(t)
	ctx := context.Background()
	require.NoError(t, p.Create(ctx, "v1", map[string]string{"size": "1"}))
	id := p.vols["v1"].VolumeID
	want := "/state/mnt/" + id

	mp, err := p.Mount(ctx, "v1", "c1")
	require.NoError(t, err)
	require.Equal(t, want, mp)
	mp2, err := p.Mount(ctx, "v1", "c2")
	require.NoError(t, err)
	require.Equal(t, want, mp2)
	_, err = p.Mount(ctx, "v1", "c2") // Docker retrying the same ID counts once
	require.NoError(t, err)
	require.Equal(t, 1, f.att.attaches, "two containers share one attach")
	require.Equal(t, "ext4", f.att.recs[id].Formatted, "mkfs asked (attach formats only a blank device)")

	path, err := p.Path("v1")
	require.NoError(t, err)
	require.Equal(t, want, path)
	info, err := p.Get(ctx, "v1")
	require.NoError(t, err)
	require.Equal(t, 2, info.Status["mounts"])
	require.Equal(t, "in-use", info.Status["cinder_status"])
	require.Equal(t, "36001405abc", info.Status["wwid"])

	require.ErrorIs(t, p.Remove(ctx, "v1"), ErrInUse)
	require.NoError(t, p.Unmount(ctx, "v1", "c1"))
	require.Zero(t, f.att.detaches, "one container left")
	require.NoError(t, p.Unmount(ctx, "v1", "c2"))
	require.Equal(t, 1, f.att.detaches, "the last Unmount detaches")
	require.Equal(t, "available", f.cinder.vols[id].Status)
	path, err = p.Path("v1")
	require.NoError(t, err)
	require.Empty(t, path)

	require.NoError(t, p.Remove(ctx, "v1"))
	require.Equal(t, []string{id}, f.cinder.deletes)
	require.NoError(t, p.Remove(ctx, "v1"), "a second Remove is fine")
}

func TestMountFailureLeavesNothing(t *testing.T) {
	f := newFixture(t)
	p := f.plugin(t)
	ctx := context.Background()
	require.NoError(t, p.Create(ctx, "v1", nil))
	f.att.failNext = errors.New("local-attach v1: connect: iscsi: login failed")
	_, err := p.Mount(ctx, "v1", "c1")
	require.ErrorContains(t, err, "login failed")
	v, _ := p.get("v1")
	require.Empty(t, v.Mounts)
	_, err = p.Mount(ctx, "nope", "c1")
	require.ErrorContains(t, err, `no brick volume named "nope"`)
	_, err = p.Mount(ctx, "v1", "")
	require.ErrorContains(t, err, "bad mount ID")
}

func TestRestartKeepsMounts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p := f.plugin(t)
	require.NoError(t, p.Create(ctx, "v1", nil))
	_, err := p.Mount(ctx, "v1", "c1")
	require.NoError(t, err)

	// kill -9 and start again: the mount is still there, so nothing changes.
	p2 := f.plugin(t)
	require.NoError(t, p2.Reconcile(ctx))
	require.Equal(t, 1, f.att.attaches)
	require.Zero(t, f.att.detaches)
	_, err = p2.Mount(ctx, "v1", "c2")
	require.NoError(t, err)
	require.Equal(t, 1, f.att.attaches)
	require.NoError(t, p2.Unmount(ctx, "v1", "c1"))
	require.NoError(t, p2.Unmount(ctx, "v1", "c2"))
	require.Equal(t, 1, f.att.detaches)
}

func TestReconcile(t *testing.T) {
	tests := []struct {
		name        string
		setup       func(f *fixture, p *Plugin, id string)
		wantDetach  int
		wantCleanup int
		wantMounts  int
	}{
		{name: "host rebooted: mount gone", setup: func(f *fixture, p *Plugin, id string) {
			_, _ = p.Mount(context.Background(), "v1", "c1")
			delete(f.att.mounted, "/state/mnt/"+id)
		}, wantDetach: 1},
		{name: "died after attach, before saving the count", setup: func(f *fixture, _ *Plugin, id string) {
			_, _ = f.att.Attach(context.Background(), attach.AttachOptions{Volume: id, Mountpoint: "/state/mnt/" + id})
		}, wantDetach: 1},
		{name: "died mid-attach", setup: func(f *fixture, _ *Plugin, id string) {
			f.att.recs[id] = &attach.Record{VolumeID: id, Phase: attach.PhaseAttaching}
		}, wantCleanup: 1},
		{name: "healthy mount kept", setup: func(_ *fixture, p *Plugin, _ string) {
			_, _ = p.Mount(context.Background(), "v1", "c1")
		}, wantMounts: 1},
		{name: "nothing attached", setup: func(*fixture, *Plugin, string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.plugin(t)
			require.NoError(t, p.Create(context.Background(), "v1", nil))
			id := p.vols["v1"].VolumeID
			tt.setup(f, p, id)
			p2 := f.plugin(t)
			require.NoError(t, p2.Reconcile(context.Background()))
			require.Equal(t, tt.wantDetach, f.att.detaches)
			require.Equal(t, tt.wantCleanup, f.att.cleanups)
			v, _ := p2.get("v1")
			require.Len(t, v.Mounts, tt.wantMounts)
		})
	}
}

func TestStateFilePrivateAndHostile(t *testing.T) {
	f := newFixture(t)
	p := f.plugin(t)
	require.NoError(t, p.Create(context.Background(), "v1", nil))
	st, err := f.h.FS.Stat("/state/state.json")
	require.NoError(t, err)
	require.Equal(t, "-rw-------", st.Mode().Perm().String())
	dir, err := f.h.FS.Stat("/state")
	require.NoError(t, err)
	require.Equal(t, "-rwx------", dir.Mode().Perm().String())

	for _, bad := range []string{
		`{`,
		`{"version": 9, "volumes": []}`,
		`{"version": 1, "volumes": [{"name": "../x", "volume_id": "00000000-0000-4000-8000-000000000001"}]}`,
		`{"version": 1, "volumes": [{"name": "a", "volume_id": "../../etc"}]}`,
		`{"version": 1, "volumes": [null]}`,
	} {
		require.NoError(t, f.h.FS.WriteFileAtomic("/state/state.json", []byte(bad)))
		_, err := New(f.h, f.att, f.cinder, f.cfg)
		require.Error(t, err, bad)
	}
}

// call posts body to the handler and decodes the answer.
func call(t *testing.T, h http.Handler, path, body string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", path, strings.NewReader(body)))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	require.Equal(t, ContentType, rec.Header().Get("Content-Type"))
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	return out
}

func TestProtocol(t *testing.T) {
	f := newFixture(t)
	h := f.plugin(t).Handler()
	require.Equal(t, []any{"VolumeDriver"}, call(t, h, "/Plugin.Activate", "")["Implements"])
	require.Equal(t, map[string]any{"Scope": "local"}, call(t, h, "/VolumeDriver.Capabilities", "{}")["Capabilities"])
	require.Empty(t, call(t, h, "/VolumeDriver.Create", `{"Name":"v1","Opts":{"size":"1"}}`)["Err"])
	out := call(t, h, "/VolumeDriver.Create", `{"Name":"../x","Opts":{}}`)
	require.Contains(t, out["Err"], `volume name "../x"`)
	out = call(t, h, "/VolumeDriver.Create", `{"Name":"v2","Opts":{"bogus":"1"}}`)
	require.Contains(t, out["Err"], `unknown option "bogus"`)
	out = call(t, h, "/VolumeDriver.Mount", `{"Name":"v1","ID":"abc"}`)
	require.Empty(t, out["Err"])
	require.True(t, strings.HasPrefix(out["Mountpoint"].(string), "/state/mnt/"))
	require.Equal(t, out["Mountpoint"], call(t, h, "/VolumeDriver.Path", `{"Name":"v1"}`)["Mountpoint"])
	vols := call(t, h, "/VolumeDriver.List", `{}`)["Volumes"].([]any)
	require.Len(t, vols, 1)
	got := call(t, h, "/VolumeDriver.Get", `{"Name":"v1"}`)["Volume"].(map[string]any)
	require.Equal(t, "v1", got["Name"])
	require.Contains(t, call(t, h, "/VolumeDriver.Get", `{"Name":"zz"}`)["Err"], "no brick volume")
	require.Contains(t, call(t, h, "/VolumeDriver.Remove", `{"Name":"v1"}`)["Err"], "volume in use")
	require.Empty(t, call(t, h, "/VolumeDriver.Unmount", `{"Name":"v1","ID":"abc"}`)["Err"])
	require.Empty(t, call(t, h, "/VolumeDriver.Remove", `{"Name":"v1"}`)["Err"])
	require.Contains(t, call(t, h, "/VolumeDriver.Create", `{"Name":"v1"} {"Name":"v2"}`)["Err"], "data after")
	require.Contains(t, call(t, h, "/VolumeDriver.Create", `{"Name":"v1","Opts":{"size":1}}`)["Err"], "decode request")
	big := `{"Name":"` + strings.Repeat("a", maxBody) + `"}`
	require.Contains(t, call(t, h, "/VolumeDriver.Create", big)["Err"], "larger than")

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/VolumeDriver.List", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

func TestErrLine(t *testing.T) {
	require.Equal(t, "a b c", errLine(errors.New("a\nb\r\n\tc")))
	long := errLine(errors.New(strings.Repeat("é", maxErrLen)))
	require.LessOrEqual(t, len(long), maxErrLen+3)
	require.True(t, strings.HasSuffix(long, "..."))
	require.True(t, bytes.HasPrefix([]byte(long), []byte("é")))
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"Name":"v1","Opts":{"size":"1"}}`, `{"Name":"v","ID":"x"}`, `{"Name":1}`, `[]`, `{"Opts":{"a":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeRequest(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Whatever decodes, the option and name checks never panic and
		// never accept a name that could leave the plugin's directory.
		if checkName(req.Name) == nil {
			require.NotContains(t, req.Name, "/")
			require.False(t, strings.HasPrefix(req.Name, "."))
		}
		_, _ = parseOpts(req.Opts, 1, 100)
	})
}

func TestLockNamePruned(t *testing.T) {
	p := newFixture(t).plugin(t)
	var wg sync.WaitGroup
	inside := map[string]int{}
	for i := range 40 {
		name := []string{"a", "b", "c"}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer p.lockName(name)()
			p.mu.Lock()
			inside[name]++
			n := inside[name]
			p.mu.Unlock()
			require.Equal(t, 1, n, "one call per name at a time")
			p.mu.Lock()
			inside[name]--
			p.mu.Unlock()
		}()
	}
	wg.Wait()
	require.Empty(t, p.locks, "no entry outlives its last user")
	defer p.lockName("a")()
	require.Len(t, p.locks, 1)
}
