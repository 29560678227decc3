// Package csi serves the Container Storage Interface (v1) for Cinder
// volumes without Nova: Identity, Controller (Cinder volumes, snapshots
// and v3 attachments reserved per Kubernetes node) and Node (brick's
// attach use case at kubelet's staging path), over gRPC on a unix socket.
//
// The controller reserves an attachment for the node at ControllerPublish
// (recorded in the volume's metadata under the node's ID) and hands its ID
// to the node in the publish context; the node completes it with its own connector at
// NodeStage, so the connector never leaves the node and the connection
// info (with its CHAP secrets) never passes through Kubernetes objects.
// docs/csi.md explains the choice.
package csi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ident"
)

// Modes of the plugin.
const (
	ModeController = "controller"
	ModeNode       = "node"
	ModeAll        = "all"
)

// Defaults of Config.
const (
	DefaultDriverName = "cinder.brick-storage.io"
	DefaultKubeletDir = "/var/lib/kubelet"
	DefaultFSType     = "ext4"
	// DefaultZone is Cinder's own default availability zone
	// (storage_availability_zone).
	DefaultZone = "nova"
	// TopologyZoneKey is cinder-csi-plugin's key, so StorageClasses'
	// allowedTopologies and PVs' node affinity move over unchanged.
	TopologyZoneKey = "topology.cinder.csi.openstack.org/zone"
	// PublishAttachmentID is the publish context key of the reserved
	// attachment's ID.
	PublishAttachmentID = "attachment_id"
	// MetadataName marks the Cinder volumes and snapshots brick csi made,
	// with the CSI name they were made for.
	MetadataName = "brick-csi-name"
	// MetadataNodePrefix + node ID is the volume metadata key holding the
	// ID of the attachment the controller reserved for that node
	// (MetadataReserving while the reservation is being made).
	MetadataNodePrefix = "brick-csi-node."
	MetadataReserving  = "reserving"
)

const gib = int64(1) << 30

// Cinder is what the controller needs of *cinderapi.Client.
type Cinder interface {
	Volume(ctx context.Context, id string) (*cinderapi.Volume, error)
	Volumes(ctx context.Context, name string) ([]cinderapi.Volume, error)
	CreateVolume(ctx context.Context, o cinderapi.CreateVolumeOpts, timeout time.Duration) (*cinderapi.Volume, error)
	DeleteVolume(ctx context.Context, id string, timeout time.Duration) error
	ExtendVolume(ctx context.Context, id string, newSize int, timeout time.Duration) (*cinderapi.Volume, error)
	Attachments(ctx context.Context, volumeID string) ([]cinderapi.Attachment, error)
	ReserveAttachment(ctx context.Context, volumeID, mode string) (*cinderapi.Attachment, error)
	DeleteAttachment(ctx context.Context, volumeID, attachmentID string) error
	SetVolumeMetadata(ctx context.Context, volumeID string, meta map[string]string) error
	DeleteVolumeMetadata(ctx context.Context, volumeID, key string) error
	GetSnapshot(ctx context.Context, id string) (*cinderapi.Snapshot, error)
	Snapshots(ctx context.Context, name, volumeID string) ([]cinderapi.Snapshot, error)
	CreateSnapshot(ctx context.Context, volumeID, name string, metadata map[string]string, timeout time.Duration) (*cinderapi.Snapshot, error)
	DeleteSnapshot(ctx context.Context, id string, timeout time.Duration) error
}

// Attacher is what the node needs of *attach.Manager.
type Attacher interface {
	Attach(ctx context.Context, opts attach.AttachOptions) (*attach.Record, error)
	Detach(ctx context.Context, opts attach.DetachOptions) error
	Record(ref string) (*attach.Record, error)
	Records() ([]*attach.Record, []error)
	Cleanup(ctx context.Context, ref string, force bool) ([]attach.CleanupResult, error)
	Extend(ctx context.Context, opts attach.ExtendOptions) (*attach.ExtendResult, error)
	DeviceSize(r *attach.Record) int64
}

// Config tunes the plugin; zero values mean the defaults.
type Config struct {
	Mode       string // ModeController, ModeNode or ModeAll
	DriverName string
	Version    string
	// KubeletDir: staging and target paths must lie beneath it.
	KubeletDir string
	// NodeID is this node's ID, a UUID (the node's machine-id by default).
	NodeID string
	// Zone is this node's availability zone ("" : no topology).
	Zone string
	// MaxVolumes is how many volumes the node takes (0: no limit).
	MaxVolumes int64
	// Gather builds the connector the node sends to Cinder.
	Gather connector.GatherOptions
}

// Driver is the plugin. Build it with New.
type Driver struct {
	cfg    Config
	cinder Cinder   // nil in node mode
	att    Attacher // nil in controller mode
	host   *host.Host
	log    *slog.Logger
	locks  keyLocks
}

// New checks cfg and builds the plugin: cinder is needed for the
// controller, att and h for the node.
func New(cfg Config, cinder Cinder, att Attacher, h *host.Host) (*Driver, error) {
	if cfg.Mode == "" {
		cfg.Mode = ModeAll
	}
	if cfg.DriverName == "" {
		cfg.DriverName = DefaultDriverName
	}
	if cfg.KubeletDir == "" {
		cfg.KubeletDir = DefaultKubeletDir
	}
	d := &Driver{cfg: cfg, cinder: cinder, att: att, host: h, log: h.Log}
	switch cfg.Mode {
	case ModeController, ModeNode, ModeAll:
	default:
		return nil, fmt.Errorf("mode %s: use controller, node or all", connector.Quote(cfg.Mode))
	}
	if d.controller() && cinder == nil {
		return nil, errors.New("the controller needs a Cinder client")
	}
	if d.node() {
		if att == nil {
			return nil, errors.New("the node needs brick's attach use case")
		}
		if err := checkKubeletDir(cfg.KubeletDir); err != nil {
			return nil, err
		}
		if !ident.IsUUID(cfg.NodeID) {
			return nil, fmt.Errorf("node ID %s: must be a UUID (the controller names the node's Cinder attachments by it)", connector.Quote(cfg.NodeID))
		}
	}
	return d, nil
}

func (d *Driver) controller() bool { return d.cfg.Mode != ModeNode }
func (d *Driver) node() bool       { return d.cfg.Mode != ModeController }

// keyLocks serialises calls on one volume, name or snapshot within the
// process: the same call twice at once runs once, then finds its result.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	mu    sync.Mutex
	users int
}

// lock takes key's lock, waiting for ctx at most; it returns the unlock.
func (k *keyLocks) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyLock{}
	}
	l := k.m[key]
	if l == nil {
		l = &keyLock{}
		k.m[key] = l
	}
	l.users++
	k.mu.Unlock()
	got := make(chan struct{})
	go func() { l.mu.Lock(); close(got) }()
	release := func() {
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
	select {
	case <-got:
		return func() { l.mu.Unlock(); release() }, nil
	case <-ctx.Done():
		// The waiter still gets the lock eventually: hand it back.
		go func() { <-got; l.mu.Unlock(); release() }()
		return nil, fmt.Errorf("waiting for another call on %s: %w", key, ctx.Err())
	}
}

// oneLine keeps a message on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// MachineNodeID is the node ID brick csi uses unless told otherwise: the
// host's /etc/machine-id (32 hex digits, stable across reboots and
// unique per installation) written as a UUID.
func MachineNodeID(fs host.FS) (string, error) {
	raw, err := fs.ReadString("/etc/machine-id")
	if err != nil {
		return "", fmt.Errorf("node ID: read /etc/machine-id: %w (or give --node-id UUID)", err)
	}
	raw = strings.TrimSpace(raw)
	if len(raw) == 32 {
		raw = raw[:8] + "-" + raw[8:12] + "-" + raw[12:16] + "-" + raw[16:20] + "-" + raw[20:]
	}
	id, ok := ident.ParseUUID(raw)
	if !ok {
		return "", fmt.Errorf("node ID: /etc/machine-id holds %s, not 32 hex digits: give --node-id UUID", connector.Quote(ident.Clip(raw, 40)))
	}
	return id, nil
}

// The clients the command hands in.
var (
	_ Cinder   = (*cinderapi.Client)(nil)
	_ Attacher = (*attach.Manager)(nil)
)
