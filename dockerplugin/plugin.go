// Package dockerplugin serves Docker's legacy volume plugin protocol over
// brick's attach use case: `docker volume create -d brick` creates (or
// adopts) a Cinder volume, and a container's Mount attaches it to this
// host, formats it when blank and mounts it under the plugin's directory.
// Mounts are counted by the ID Docker passes per container, so containers
// share one attach and the last Unmount detaches. The plugin's state lives
// in one private file, so a restarted plugin keeps serving live mounts.
package dockerplugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// DefaultStateDir holds the plugin's state file and its mounts.
const DefaultStateDir = "/var/lib/brick/docker"

// MetadataKey marks the Cinder volumes the plugin created.
const MetadataKey = "brick-docker-volume"

// Attacher is what the plugin needs of attach.Manager.
type Attacher interface {
	Attach(ctx context.Context, opts attach.AttachOptions) (*attach.Record, error)
	Detach(ctx context.Context, opts attach.DetachOptions) error
	Record(ref string) (*attach.Record, error)
	Cleanup(ctx context.Context, ref string, force bool) ([]attach.CleanupResult, error)
}

// Cinder is what the plugin needs of cinderapi.Client.
type Cinder interface {
	FindVolume(ctx context.Context, ref string) (*cinderapi.Volume, error)
	Volume(ctx context.Context, id string) (*cinderapi.Volume, error)
	CreateVolume(ctx context.Context, o cinderapi.CreateVolumeOpts, timeout time.Duration) (*cinderapi.Volume, error)
	DeleteVolume(ctx context.Context, id string, timeout time.Duration) error
}

// Plugin is the volume driver. Build it with New.
type Plugin struct {
	attacher Attacher
	cinder   Cinder
	fs       host.FS
	mounted  func(dir string) (bool, error)
	log      *slog.Logger
	cfg      Config

	mu    sync.Mutex // guards vols and locks
	vols  map[string]*Volume
	locks map[string]*nameLock
	st    store
}

// Config tunes the plugin; the zero value means the defaults.
type Config struct {
	// StateDir holds state.json and mnt/<volume id> (DefaultStateDir).
	StateDir string
	// DefaultSizeGiB is the size of a volume created without -o size (1).
	DefaultSizeGiB int
	// MaxSizeGiB refuses larger sizes (DefaultMaxSizeGiB).
	MaxSizeGiB int
	// Gather is the connector sent to Cinder (multipath, nic...).
	Gather connector.GatherOptions
}

// New loads the plugin's state from h's filesystem.
func New(h *host.Host, a Attacher, c Cinder, cfg Config) (*Plugin, error) {
	if cfg.StateDir == "" {
		cfg.StateDir = DefaultStateDir
	}
	if cfg.DefaultSizeGiB <= 0 {
		cfg.DefaultSizeGiB = 1
	}
	if cfg.MaxSizeGiB <= 0 {
		cfg.MaxSizeGiB = DefaultMaxSizeGiB
	}
	p := &Plugin{
		attacher: a, cinder: c, fs: h.FS, log: h.Log, cfg: cfg,
		mounted: func(dir string) (bool, error) { return h.Sys.IsMounted(dir) },
		locks:   map[string]*nameLock{},
		st:      store{fs: h.FS, path: filepath.Join(cfg.StateDir, "state.json")},
	}
	vols, err := p.st.load()
	if err != nil {
		return nil, err
	}
	p.vols = vols
	return p, nil
}

// mountpoint is where a Cinder volume is mounted: by ID, so a name never
// becomes a path.
func (p *Plugin) mountpoint(volumeID string) string {
	return filepath.Join(p.cfg.StateDir, "mnt", volumeID)
}

// nameLock is one volume name's lock; users counts the calls holding or
// waiting for it, so the entry goes when the last one is done.
type nameLock struct {
	sync.Mutex
	users int
}

// lockName serializes the operations on one volume name; calls for other
// names run meanwhile. It returns the unlock, which drops the name's entry
// once no call holds or waits for it, so the map does not grow with every
// name ever used.
func (p *Plugin) lockName(name string) func() {
	p.mu.Lock()
	l := p.locks[name]
	if l == nil {
		l = &nameLock{}
		p.locks[name] = l
	}
	l.users++
	p.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		p.mu.Lock()
		defer p.mu.Unlock()
		if l.users--; l.users == 0 {
			delete(p.locks, name)
		}
	}
}

// get returns a copy of the named volume's entry.
func (p *Plugin) get(name string) (Volume, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := p.vols[name]
	if v == nil {
		return Volume{}, false
	}
	c := *v
	c.Mounts = slices.Clone(v.Mounts)
	return c, true
}

// put stores (or with nil, drops) the named entry and saves the state; on
// a failed save the old entry stays in memory too.
func (p *Plugin) put(name string, v *Volume) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := make(map[string]*Volume, len(p.vols)+1)
	for k, old := range p.vols {
		next[k] = old
	}
	if v == nil {
		delete(next, name)
	} else {
		next[name] = v
	}
	if err := p.st.save(next); err != nil {
		return err
	}
	p.vols = next
	return nil
}

// errNoVolume answers calls about names the plugin does not know.
func errNoVolume(name string) error {
	return fmt.Errorf("no brick volume named %s", connector.Quote(name))
}

// ErrInUse refuses Remove while containers use the volume.
var ErrInUse = errors.New("volume in use")
