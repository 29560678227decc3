// Package connector holds what every protocol shares: the host's connector
// properties (what `brick get-connector` prints and Cinder needs to export a
// volume), Cinder's connection info, the attached Device, the Connector
// interface each protocol implements, and the registry that picks one by
// driver_volume_type.
package connector

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/brick-storage/brick/ident"
)

// Device is an attached volume as brick hands it to the user, and what a
// later disconnect needs to find it again. It carries no secrets: it is
// written to the state record and printed.
type Device struct {
	// Path is what the user opens: /dev/dm-3, /dev/sdb, /dev/rbd0, or a file on an NFS share.
	Path string `json:"path"`
	// Type is "block" or "file".
	Type string `json:"type"`
	// Protocol is the driver_volume_type that produced the device.
	Protocol string `json:"protocol"`
	// WWN is the SCSI WWID (as /dev/disk/by-id/wwn- and multipath use it), when known.
	WWN string `json:"scsi_wwn,omitempty"`
	// MultipathID is the dm-multipath map's WWID when Path is a multipath map.
	MultipathID string `json:"multipath_id,omitempty"`
	// Paths are the component devices beneath Path (each /dev/sdX of a map).
	Paths []string `json:"paths,omitempty"`
	// Extra holds protocol facts disconnect needs (mount point, rbd pool and
	// image, loop device, HCTLs...). Keys are protocol-defined.
	Extra map[string]string `json:"extra,omitempty"`
}

// ExtraUnitSerial is the Device.Extra key SCSI connectors set to a LUN's
// unit serial (VPD page 0x80) when it has no WWID: disconnect checks the
// LUN still shows it before taking the disk away.
const ExtraUnitSerial = "unit_serial"

// Device.Extra keys the SCSI connectors set when Path is a multipath map.
const (
	ExtraMultipathByID = "multipath_by_id" // /dev/disk/by-id/dm-uuid-mpath-<wwid>
	ExtraDMName        = "dm_name"         // what multipath -f takes
)

// OnMap points d at the dm-multipath map over its paths: its device
// (/dev/dm-N), WWID, udev link and device-mapper name.
func (d *Device) OnMap(path, wwid, byID, dmName string) {
	d.Path = path
	d.MultipathID = wwid
	if d.Extra == nil {
		d.Extra = map[string]string{}
	}
	d.Extra[ExtraMultipathByID] = byID
	d.Extra[ExtraDMName] = dmName
}

// Device types.
const (
	TypeBlock = "block"
	TypeFile  = "file"
)

// DisconnectOptions tune a disconnect.
type DisconnectOptions struct {
	// Force disconnects even when the device is mounted or open, or a flush
	// fails: data not yet written may be lost.
	Force bool
}

// Connector attaches and detaches volumes of one protocol on this host.
type Connector interface {
	// Connect validates info, attaches the volume and returns the verified device.
	Connect(ctx context.Context, info ConnectionInfo) (*Device, error)
	// Disconnect detaches the volume. dev is what Connect returned, or nil
	// when it is not known (the device is then looked up from info).
	// Disconnecting a volume that is not attached succeeds.
	Disconnect(ctx context.Context, info ConnectionInfo, dev *Device, opts DisconnectOptions) error
	// DevicePaths returns the device paths present on the host for the
	// volume info describes; none is not an error.
	DevicePaths(ctx context.Context, info ConnectionInfo) ([]string, error)
}

// ErrUnsupported is returned for a driver_volume_type brick cannot attach.
var ErrUnsupported = errors.New("unsupported driver_volume_type")

// Registry maps driver_volume_type names to connectors. Build one per
// process with the connectors configured for this host.
type Registry struct {
	byType map[string]Connector
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byType: map[string]Connector{}} }

// Register makes c handle the given driver_volume_type names (lowercase).
func (r *Registry) Register(c Connector, types ...string) {
	for _, t := range types {
		r.byType[strings.ToLower(t)] = c
	}
}

// For returns the connector for a driver_volume_type.
func (r *Registry) For(driverVolumeType string) (Connector, error) {
	if c, ok := r.byType[strings.ToLower(driverVolumeType)]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("%w %q (supported: %s)", ErrUnsupported, ident.Clip(driverVolumeType, 64), strings.Join(r.Types(), ", "))
}

// Types lists the registered driver_volume_type names, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.byType))
	for t := range r.byType {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
