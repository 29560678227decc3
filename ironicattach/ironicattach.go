// Package ironicattach is the standalone boot-from-volume use case of
// Ironic's "volume connection information" spec: take a node's initiators
// from its Ironic volume connectors, have Cinder export a volume to them,
// and record the result as the node's volume target — and the reverse.
// Nothing is connected on the host brick runs on.
package ironicattach

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ironicapi"
)

// Cinder is what the use case needs from *cinderapi.Client.
type Cinder interface {
	FindVolume(ctx context.Context, ref string) (*cinderapi.Volume, error)
	Volume(ctx context.Context, id string) (*cinderapi.Volume, error)
	Flow() cinderapi.Flow
}

// Secrets receives secret values as they become known (a *host.Redactor).
type Secrets interface{ Add(secrets ...string) }

// Manager runs attach-volume and detach-volume.
type Manager struct {
	Cinder  Cinder
	Ironic  *gophercloud.ServiceClient
	Secrets Secrets      // may be nil
	Log     *slog.Logger // may be nil
	// UndoTimeout bounds the rollback after a failure (default 2 min); it
	// runs even when the caller's context was cancelled.
	UndoTimeout time.Duration
}

// AttachOpts are attach-volume's inputs.
type AttachOpts struct {
	Node      string // name or UUID
	Volume    string // Cinder name or ID
	BootIndex int
	// Multipath asks Cinder for every path (multipath connector).
	Multipath bool
}

// Result describes an export recorded in Ironic.
type Result struct {
	Node         ironicapi.Node
	VolumeID     string
	AttachmentID string
	Flow         string
	Target       *ironicapi.Target
	Connector    cinderapi.Connector
}

func (m *Manager) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.New(slog.DiscardHandler)
}

// AttachVolume exports the volume to the node's initiators and creates the
// node's volume target with Cinder's connection info. Any failure undoes
// every step already done, newest first, and returns the first error.
func (m *Manager) AttachVolume(ctx context.Context, o AttachOpts) (res *Result, err error) {
	op := fmt.Sprintf("attach-volume %s to node %s", o.Volume, o.Node)
	if o.BootIndex < 0 {
		return nil, fmt.Errorf("%s: boot index %d is negative", op, o.BootIndex)
	}
	node, err := ironicapi.GetNode(ctx, m.Ironic, o.Node).Extract()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	conns, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(m.Ironic, node.UUID, nil), 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	conn, err := ironicapi.CinderConnector(node.UUID, conns, o.Multipath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	vol, err := m.Cinder.FindVolume(ctx, o.Volume)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(m.Ironic, node.UUID, nil), 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	for _, t := range targets {
		// Checked before Cinder is touched: Ironic would refuse the target
		// only after the export, with more to undo.
		if t.VolumeID == vol.ID {
			return nil, fmt.Errorf("%s: node %s has volume %s already (target %s)", op, node.Display(), vol.ID, t.UUID)
		}
		if t.BootIndex == o.BootIndex {
			return nil, fmt.Errorf("%s: node %s uses boot index %d already (target %s, volume %s): pick another --boot-index", op, node.Display(), o.BootIndex, t.UUID, t.VolumeID)
		}
	}
	if vol.Status != "available" {
		return nil, fmt.Errorf("%s: volume %s is %s, not available", op, vol.ID, vol.Status)
	}

	var undo []func(context.Context) error
	var undoNames []string
	defer func() {
		if err == nil {
			return
		}
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.undoTimeout())
		defer cancel()
		for i := len(undo) - 1; i >= 0; i-- {
			if uerr := undo[i](uctx); uerr != nil {
				m.log().Error("attach-volume: undo failed", "step", undoNames[i], "volume", vol.ID, "err", uerr.Error())
				err = fmt.Errorf("%w (undo %s also failed: %v)", err, undoNames[i], uerr)
			}
		}
	}()
	push := func(name string, f func(context.Context) error) {
		undo = append(undo, f)
		undoNames = append(undoNames, name)
	}

	flow := m.Cinder.Flow()
	cconn := cinderapi.Connector(conn)
	attID, err := flow.Reserve(ctx, vol.ID, "rw")
	if err != nil {
		return nil, fmt.Errorf("%s: reserve: %w", op, err)
	}
	push("unreserve", func(c context.Context) error { return flow.Unreserve(c, vol.ID, attID) })
	info, err := flow.Export(ctx, vol.ID, attID, cconn)
	if err != nil {
		return nil, fmt.Errorf("%s: export: %w", op, err)
	}
	if m.Secrets != nil {
		m.Secrets.Add(info.Secrets()...)
	}
	push("unexport", func(c context.Context) error { return flow.Unexport(c, vol.ID, attID, cconn) })
	copts := cinderapi.CompleteOpts{HostName: node.UUID, Mode: "rw"}
	done, err := flow.Complete(ctx, vol.ID, attID, copts)
	if err != nil {
		return nil, fmt.Errorf("%s: complete: %w", op, err)
	}
	if done != "" {
		attID = done
	}
	push("uncomplete", func(c context.Context) error { return flow.Uncomplete(c, vol.ID, attID, copts) })

	t, err := ironicapi.CreateTarget(ctx, m.Ironic, ironicapi.TargetCreateOpts{
		NodeUUID: node.UUID, VolumeType: info.DriverVolumeType, BootIndex: o.BootIndex, VolumeID: vol.ID,
		Properties: m.targetProperties(info),
	}).Extract()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return &Result{Node: *node, VolumeID: vol.ID, AttachmentID: attID, Flow: flow.Name(), Target: t, Connector: cconn}, nil
}

var propKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`) })

// targetProperties is the connection info data as Ironic stores it: keys
// Ironic could not patch later are left out (with a warning).
func (m *Manager) targetProperties(info connector.ConnectionInfo) map[string]any {
	out := make(map[string]any, len(info.Data))
	for k, v := range info.Data {
		if !propKeyRE().MatchString(k) {
			m.log().Warn("attach-volume: connection info key left out of the target properties", "key", connector.Quote(k))
			continue
		}
		out[k] = v
	}
	return out
}

func (m *Manager) undoTimeout() time.Duration {
	if m.UndoTimeout > 0 {
		return m.UndoTimeout
	}
	return 2 * time.Minute
}

// DetachOpts are detach-volume's inputs.
type DetachOpts struct {
	Node   string
	Volume string
}

// DetachResult says what detach-volume removed.
type DetachResult struct {
	Node           ironicapi.Node
	VolumeID       string
	DeletedTargets []string
	Detached       []string // Cinder attachment IDs
}

// DetachVolume deletes the node's targets for the volume, then ends the
// volume's Cinder attachments to the node. The targets go first: Ironic
// deletes them only while the node is powered off, and a node that is on
// may be running from the volume, so Cinder is left alone then. Running it
// again after a partial failure finishes the job; nothing left is success.
func (m *Manager) DetachVolume(ctx context.Context, o DetachOpts) (*DetachResult, error) {
	op := fmt.Sprintf("detach-volume %s from node %s", o.Volume, o.Node)
	node, err := ironicapi.GetNode(ctx, m.Ironic, o.Node).Extract()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	vol, err := m.Cinder.FindVolume(ctx, o.Volume)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	res := &DetachResult{Node: *node, VolumeID: vol.ID}
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(m.Ironic, node.UUID, nil), 0)
	if err != nil {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	for _, t := range targets {
		if t.VolumeID != vol.ID {
			continue
		}
		if err := ironicapi.DeleteTarget(ctx, m.Ironic, t.UUID).ExtractErr(); err != nil && !errors.Is(err, ironicapi.ErrNotFound) {
			if errors.Is(err, ironicapi.ErrNotPoweredOff) {
				return res, fmt.Errorf("%s: the node may be running from the volume, so Cinder was not touched: %w", op, err)
			}
			return res, fmt.Errorf("%s: %w", op, err)
		}
		res.DeletedTargets = append(res.DeletedTargets, t.UUID)
	}

	var atts []string
	for _, a := range vol.Attachments {
		if a.HostName == node.UUID || (node.Name != "" && a.HostName == node.Name) {
			atts = append(atts, a.AttachmentID)
		}
	}
	if len(atts) == 0 {
		return res, nil
	}
	// Legacy Cinder needs the connector again to end the export.
	conn := cinderapi.Connector{"host": node.UUID}
	if conns, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(m.Ironic, node.UUID, nil), 0); err == nil {
		if c, err := ironicapi.CinderConnector(node.UUID, conns, false); err == nil {
			conn = c
		}
	}
	flow := m.Cinder.Flow()
	for _, id := range atts {
		if slices.Contains(res.Detached, id) {
			continue
		}
		if err := flow.BeginDetach(ctx, vol.ID); err != nil {
			return res, fmt.Errorf("%s: begin detach: %w", op, err)
		}
		if err := flow.Detach(ctx, vol.ID, id, conn); err != nil {
			if rerr := flow.RollDetach(context.WithoutCancel(ctx), vol.ID); rerr != nil {
				err = fmt.Errorf("%w (roll back detaching also failed: %v)", err, rerr)
			}
			return res, fmt.Errorf("%s: detach attachment %s: %w", op, id, err)
		}
		res.Detached = append(res.Detached, id)
	}
	return res, nil
}
