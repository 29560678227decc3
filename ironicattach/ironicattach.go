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
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/rollback"
)

// Cinder is what the use case needs from *cinderapi.Client.
type Cinder interface {
	FindVolume(ctx context.Context, ref string) (*cinderapi.Volume, error)
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
	// UndoTimeout bounds the rollback after a failure (default
	// rollback.DefaultTimeout); it runs even when the caller's context was
	// cancelled.
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
	Node         nodes.Node
	VolumeID     string
	AttachmentID string
	Flow         string
	Target       *ironicapi.VolumeTarget
	Connector    cinderapi.HostConnector
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
func (m *Manager) AttachVolume(ctx context.Context, o AttachOpts) (*Result, error) {
	op := fmt.Sprintf("attach-volume %s to node %s", o.Volume, o.Node)
	if o.BootIndex < 0 {
		return nil, fmt.Errorf("%s: boot index %d is negative", op, o.BootIndex)
	}
	p, err := m.planAttach(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	res, err := m.export(ctx, p, o.BootIndex)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// attachPlan is what attach-volume found before changing anything.
type attachPlan struct {
	node *nodes.Node
	conn cinderapi.HostConnector
	vol  *cinderapi.Volume
}

// planAttach looks up the node, its connectors and the volume, and checks
// everything Ironic or Cinder would refuse only after the export.
func (m *Manager) planAttach(ctx context.Context, o AttachOpts) (*attachPlan, error) {
	node, err := ironicapi.GetNode(ctx, m.Ironic, o.Node).Extract()
	if err != nil {
		return nil, err
	}
	conns, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(m.Ironic, node.UUID, nil), 0)
	if err != nil {
		return nil, err
	}
	conn, err := CinderConnector(node.UUID, conns, o.Multipath)
	if err != nil {
		return nil, err
	}
	vol, err := m.Cinder.FindVolume(ctx, o.Volume)
	if err != nil {
		return nil, err
	}
	if err := m.checkTargets(ctx, node, vol.ID, o.BootIndex); err != nil {
		return nil, err
	}
	if vol.Status != "available" {
		return nil, fmt.Errorf("volume %s is %s, not available", vol.ID, vol.Status)
	}
	return &attachPlan{node: node, conn: conn, vol: vol}, nil
}

// checkTargets refuses a volume the node has already or a boot index it
// uses: Ironic would refuse the target only after the export, with more
// to undo.
func (m *Manager) checkTargets(ctx context.Context, node *nodes.Node, volID string, bootIndex int) error {
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(m.Ironic, node.UUID, nil), 0)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if t.VolumeID == volID {
			return fmt.Errorf("node %s has volume %s already (target %s)", display(node), volID, t.UUID)
		}
		if t.BootIndex == bootIndex {
			return fmt.Errorf("node %s uses boot index %d already (target %s, volume %s): pick another --boot-index", display(node), bootIndex, t.UUID, t.VolumeID)
		}
	}
	return nil
}

// display is the node's name, or its UUID when it has none.
func display(n *nodes.Node) string {
	if n.Name != "" {
		return n.Name
	}
	return n.UUID
}

// export runs the Cinder export and records it as the node's target, as
// named steps; a failed step undoes the ones before it.
func (m *Manager) export(ctx context.Context, p *attachPlan, bootIndex int) (*Result, error) {
	flow := m.Cinder.Flow()
	vol := p.vol.ID
	var attID string
	var reserved, exported bool
	var info connector.ConnectionInfo
	var target *ironicapi.VolumeTarget
	release := func(c context.Context) error {
		if !reserved {
			return nil
		}
		o := cinderapi.ReleaseOpts{AttachmentID: attID, HostName: p.node.UUID}
		if exported {
			o.Connector = p.conn
		}
		return flow.Release(c, vol, o)
	}
	j := rollback.Journal{Timeout: m.UndoTimeout, Log: m.Log}
	err := j.Run(ctx,
		rollback.Step{Name: "reserve", UndoName: "release", Undo: release, Do: func(ctx context.Context) (err error) {
			attID, err = flow.Reserve(ctx, vol, "rw")
			reserved = err == nil
			return err
		}},
		rollback.Step{Name: "export", Do: func(ctx context.Context) (err error) {
			exported = true // a failed export may have half happened: release it too
			if info, err = flow.Export(ctx, vol, attID, p.conn); err == nil && m.Secrets != nil {
				m.Secrets.Add(info.Secrets()...)
			}
			return err
		}},
		rollback.Step{Name: "complete", Do: func(ctx context.Context) error {
			done, err := flow.Complete(ctx, vol, attID, cinderapi.CompleteOpts{HostName: p.node.UUID, Mode: "rw"})
			if done != "" {
				attID = done
			}
			return err
		}},
		rollback.Step{Name: "create target", Do: func(ctx context.Context) (err error) {
			target, err = ironicapi.CreateTarget(ctx, m.Ironic, ironicapi.TargetCreateOpts{
				NodeUUID: p.node.UUID, VolumeType: info.DriverVolumeType, BootIndex: bootIndex, VolumeID: vol,
				Properties: m.targetProperties(info),
			}).Extract()
			return err
		}},
	)
	if err != nil {
		if uerr := j.Rollback(ctx); uerr != nil {
			m.log().Error("attach-volume: undo failed", "volume", vol, "err", uerr.Error())
			err = fmt.Errorf("%w (undo also failed: %v)", err, uerr)
		}
		return nil, err
	}
	return &Result{Node: *p.node, VolumeID: vol, AttachmentID: attID, Flow: flow.Name(), Target: target, Connector: p.conn}, nil
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

// DetachOpts are detach-volume's inputs.
type DetachOpts struct {
	Node   string
	Volume string
}

// DetachResult says what detach-volume removed.
type DetachResult struct {
	Node           nodes.Node
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
	if err := m.deleteTargets(ctx, res); err != nil {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	if err := m.endAttachments(ctx, vol, res); err != nil {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	return res, nil
}

// deleteTargets deletes the node's targets for the volume; one already
// gone counts as deleted.
func (m *Manager) deleteTargets(ctx context.Context, res *DetachResult) error {
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(m.Ironic, res.Node.UUID, nil), 0)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if t.VolumeID != res.VolumeID {
			continue
		}
		err := ironicapi.DeleteTarget(ctx, m.Ironic, t.UUID).ExtractErr()
		switch {
		case errors.Is(err, apierr.ErrInvalidState):
			return fmt.Errorf("the node may be running from the volume, so Cinder was not touched: %w", err)
		case err != nil && !errors.Is(err, apierr.ErrNotFound):
			return err
		}
		res.DeletedTargets = append(res.DeletedTargets, t.UUID)
	}
	return nil
}

// endAttachments ends the volume's Cinder attachments to the node (by
// UUID or name as host_name).
func (m *Manager) endAttachments(ctx context.Context, vol *cinderapi.Volume, res *DetachResult) error {
	var atts []string
	for _, a := range vol.Attachments {
		if a.HostName == res.Node.UUID || (res.Node.Name != "" && a.HostName == res.Node.Name) {
			atts = append(atts, a.AttachmentID)
		}
	}
	if len(atts) == 0 {
		return nil
	}
	conn := m.detachConnector(ctx, res.Node.UUID)
	flow := m.Cinder.Flow()
	for _, id := range atts {
		if slices.Contains(res.Detached, id) {
			continue
		}
		roll, err := flow.BeginDetach(ctx, vol.ID)
		if err != nil {
			return fmt.Errorf("begin detach: %w", err)
		}
		if err := flow.Release(ctx, vol.ID, cinderapi.ReleaseOpts{AttachmentID: id, Connector: conn, HostName: res.Node.UUID}); err != nil {
			if roll != nil {
				if rerr := roll(context.WithoutCancel(ctx)); rerr != nil {
					err = fmt.Errorf("%w (roll back detaching also failed: %v)", err, rerr)
				}
			}
			return fmt.Errorf("detach attachment %s: %w", id, err)
		}
		res.Detached = append(res.Detached, id)
	}
	return nil
}

// detachConnector is the node's connector as at attach time: legacy
// Cinder needs it again to end the export. Without one, the host alone.
func (m *Manager) detachConnector(ctx context.Context, nodeUUID string) cinderapi.HostConnector {
	conns, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(m.Ironic, nodeUUID, nil), 0)
	if err == nil {
		if c, err := CinderConnector(nodeUUID, conns, false); err == nil {
			return c
		}
	}
	return cinderapi.HostConnector{"host": nodeUUID}
}
