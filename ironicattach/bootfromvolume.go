package ironicattach

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/ironicapi"
	"github.com/brick-storage/brick/rollback"
)

// What a node needs to boot from a Cinder volume over iSCSI with iPXE.
const (
	StorageInterface = "cinder"
	BootInterface    = "ipxe"
	BootCapability   = "iscsi_boot"
	// RecordKey is the key of the node's extra holding what
	// boot-from-volume made, so that --undo reverses that and nothing else.
	RecordKey = "brick_boot_from_volume"
	// BootMicroversion is the first Ironic API version that shows and
	// sets a node's storage_interface; below it Ironic hides the field
	// and refuses a PATCH of it.
	BootMicroversion = "1.33"
)

// Provision states boot-from-volume reads.
const (
	stateActive       = "active"
	stateAvailable    = "available"
	stateDeployFailed = "deploy failed"
)

// ErrNotReady: the node, this Ironic or the volume cannot boot from a
// volume as they are; nothing was changed.
var ErrNotReady = errors.New("not ready for boot from volume")

// BootOpts are boot-from-volume's inputs.
type BootOpts struct {
	Node   string // name or UUID
	Volume string // Cinder name or ID
	// Initiator is an iSCSI name registered as the node's iqn connector
	// when the node has none.
	Initiator string
	// Deploy asks Ironic to deploy the node and waits for "active".
	Deploy bool
	// Wait bounds a deploy or undeploy (default 10 minutes).
	Wait time.Duration
	// Poll is the gap between node reads while waiting (default 2 s).
	Poll time.Duration
}

// BootRecord is what brick made for a node's boot from volume, kept in the
// node's extra under RecordKey. A *Was field is set only when brick
// changed that value, and holds the value before ("" when none).
type BootRecord struct {
	VolumeID            string  `json:"volume_id"`
	TargetUUID          string  `json:"target_uuid,omitempty"`
	ConnectorUUID       string  `json:"connector_uuid,omitempty"`
	StorageInterfaceWas *string `json:"storage_interface_was,omitempty"`
	BootInterfaceWas    *string `json:"boot_interface_was,omitempty"`
	CapabilityWas       *string `json:"iscsi_boot_was,omitempty"`
	Deployed            bool    `json:"deployed,omitempty"`
}

// BootResult says what boot-from-volume found and did.
type BootResult struct {
	Node       nodes.Node
	VolumeID   string
	Initiator  string
	TargetUUID string
	Record     BootRecord
	// Changes names each change made by this run; empty when the node was
	// set up already.
	Changes []string
	// Next lists the commands left to run, e.g. the deploy.
	Next []string
}

// bootPlan is what boot-from-volume found before changing anything.
type bootPlan struct {
	node      *nodes.Node
	vol       *cinderapi.Volume
	rec       BootRecord // the record to store
	hadRecord bool
	iqn       string // the initiator Ironic will export to
	newIQN    bool   // create a connector for iqn
	target    string // an existing boot target of the volume
	patch     []nodes.UpdateOperation
	deploy    bool
}

func (p *bootPlan) changes() bool { return p.newIQN || p.target == "" || len(p.patch) > 0 || p.deploy }

// BootFromVolume makes the node boot from the volume: its iqn connector
// (registered from o.Initiator if missing), a volume target with boot
// index 0, the iscsi_boot capability, the cinder storage and ipxe boot
// interfaces, and with o.Deploy the deploy. Ironic's cinder storage
// interface exports the volume at deploy time. Everything is checked
// before the first change; a failure undoes what this run did, newest
// first; a second run changes nothing.
func (m *Manager) BootFromVolume(ctx context.Context, o BootOpts) (*BootResult, error) {
	m = m.forBoot()
	op := fmt.Sprintf("boot-from-volume node %s", o.Node)
	p, err := m.planBoot(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	res := &BootResult{VolumeID: p.vol.ID, Initiator: p.iqn}
	if err := m.applyBoot(ctx, p, o, res); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	n, err := ironicapi.GetNode(ctx, m.Ironic, p.node.UUID).Extract()
	if err != nil {
		return nil, fmt.Errorf("%s: read the node back: %w", op, err)
	}
	res.Node, res.Record, res.TargetUUID = *n, p.rec, p.target
	res.Next = nextSteps(n)
	return res, nil
}

// forBoot returns m with an Ironic client that asks for at least
// BootMicroversion (the caller's client is left as it is).
func (m *Manager) forBoot() *Manager {
	c := *m
	if m.Ironic != nil && !ironicapi.AtLeast(m.Ironic.Microversion, BootMicroversion) {
		sc := *m.Ironic
		sc.Microversion = BootMicroversion
		c.Ironic = &sc
	}
	return &c
}

// planBoot validates everything and works out the changes.
func (m *Manager) planBoot(ctx context.Context, o BootOpts) (*bootPlan, error) {
	node, err := m.bootNode(ctx, o.Node)
	if err != nil {
		return nil, err
	}
	vol, err := m.Cinder.FindVolume(ctx, o.Volume)
	if err != nil {
		return nil, err
	}
	return m.planBootOn(ctx, node, vol, o)
}

// bootNode reads the node and checks this Ironic can boot it from a volume.
func (m *Manager) bootNode(ctx context.Context, ref string) (*nodes.Node, error) {
	node, err := ironicapi.GetNode(ctx, m.Ironic, ref).Extract()
	if err != nil {
		return nil, err
	}
	if !ident.IsUUID(node.UUID) {
		return nil, fmt.Errorf("ironic answered node %s without a UUID", connector.Quote(ref))
	}
	return node, m.checkIronic(ctx, node)
}

// planBootOn works out the changes that make node boot from vol.
func (m *Manager) planBootOn(ctx context.Context, node *nodes.Node, vol *cinderapi.Volume, o BootOpts) (*bootPlan, error) {
	rec, had, err := ReadBootRecord(node)
	if err != nil {
		return nil, err
	}
	if had && rec.VolumeID != vol.ID {
		return nil, fmt.Errorf("node %s boots from volume %s already (set up by brick): undo that first (--undo): %w", display(node), rec.VolumeID, ErrNotReady)
	}
	rec.VolumeID = vol.ID
	p := &bootPlan{node: node, vol: vol, rec: rec, hadRecord: had}
	if err := checkVolume(node, vol); err != nil {
		return nil, err
	}
	if err := m.planInitiator(ctx, p, o.Initiator); err != nil {
		return nil, err
	}
	if err := m.planTarget(ctx, p); err != nil {
		return nil, err
	}
	if err := planNodePatch(p, o.Deploy); err != nil {
		return nil, err
	}
	if p.deploy {
		if err := m.checkDeployable(ctx, node); err != nil {
			return nil, err
		}
	}
	return p, checkStates(p)
}

// checkDeployable wants, before a deploy, a deploy interface that runs the
// storage interface's attach (fake goes active without exporting the
// volume) and a port: Ironic's ipxe boot interface refuses a node without
// one (and names the node's iPXE script after its MAC), which brick would
// otherwise learn only after changing the node.
func (m *Manager) checkDeployable(ctx context.Context, node *nodes.Node) error {
	if node.DeployInterface == "fake" {
		return fmt.Errorf("node %s has the fake deploy interface: it would go active without Ironic exporting the volume or writing its iPXE script; set a real one (baremetal node set %s --deploy-interface direct): %w", display(node), node.UUID, ErrNotReady)
	}
	found, err := ironicapi.NodeHasPort(ctx, m.Ironic, node.UUID)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("node %s has no port: Ironic's ipxe boot interface needs the node's MAC to deploy (baremetal port create MAC --node %s): %w", display(node), node.UUID, ErrNotReady)
	}
	return nil
}

// checkIronic refuses an Ironic without the volume API or a hardware type
// without the cinder storage and ipxe boot interfaces enabled.
func (m *Manager) checkIronic(ctx context.Context, node *nodes.Node) error {
	v, err := ironicapi.MaxVersion(ctx, m.Ironic)
	if err != nil {
		return err
	}
	if !ironicapi.AtLeast(v, BootMicroversion) {
		return fmt.Errorf("this Ironic serves API %s at most; boot from volume needs %s (volume targets and the node's storage_interface): %w", v, BootMicroversion, ErrNotReady)
	}
	d, err := ironicapi.DriverDetails(ctx, m.Ironic, node.Driver)
	if err != nil {
		return err
	}
	need := []struct{ kind, want string }{{"storage", StorageInterface}, {"boot", BootInterface}}
	for _, n := range need {
		enabled := d.EnabledStorageInterfaces
		if n.kind == "boot" {
			enabled = d.EnabledBootInterfaces
		}
		if !slices.Contains(enabled, n.want) {
			return fmt.Errorf("hardware type %s has no %s %s interface enabled (it has: %s); add it to enabled_%s_interfaces in ironic.conf (and the type's supported list): %w",
				connector.Quote(node.Driver), n.want, n.kind, strings.Join(enabled, ", "), n.kind, ErrNotReady)
		}
	}
	return nil
}

// checkVolume wants a volume Ironic can attach at deploy (available), or,
// on a deployed node, the one Ironic attached to it (server_id = node).
// brick never exports the boot volume itself: Ironic's cinder storage
// interface takes a volume attached to the node as done and writes no
// portal for it, and reserves any other in-use volume, which fails.
func checkVolume(node *nodes.Node, vol *cinderapi.Volume) error {
	if vol.Size < 1 {
		return fmt.Errorf("volume %s has size %d GiB: too small to boot from: %w", vol.ID, vol.Size, ErrNotReady)
	}
	if vol.Status == "available" {
		return nil
	}
	for _, a := range vol.Attachments {
		switch {
		case a.ServerID == node.UUID && node.ProvisionState == stateActive:
			return nil
		case a.ServerID == node.UUID:
			return fmt.Errorf("volume %s is attached to node %s, which is %s, not deployed: Ironic's deploy would take it as attached and write no portal into the node's iPXE script; detach it in Cinder first: %w",
				vol.ID, display(node), connector.Quote(node.ProvisionState), ErrNotReady)
		case a.HostName == node.UUID:
			return fmt.Errorf("volume %s is exported to node %s already (brick ironic attach-volume?): Ironic's deploy attaches the boot volume itself and would fail to reserve it; detach it first (brick ironic detach-volume): %w",
				vol.ID, display(node), ErrNotReady)
		}
	}
	return fmt.Errorf("volume %s is %s, not available: Ironic attaches it when it deploys the node: %w", vol.ID, vol.Status, ErrNotReady)
}

// planInitiator picks the node's iqn connector, or plans one for
// initiator. Ironic's cinder interface exports to the first iqn.
func (m *Manager) planInitiator(ctx context.Context, p *bootPlan, initiator string) error {
	conns, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(m.Ironic, p.node.UUID, nil), 0)
	if err != nil {
		return err
	}
	if initiator != "" {
		if initiator, err = ironicapi.NormalizeConnectorID(ironicapi.ConnectorIQN, initiator); err != nil {
			return invalid("boot-from-volume", "--initiator: "+err.Error())
		}
	}
	for _, c := range conns {
		if c.Type != ironicapi.ConnectorIQN {
			continue
		}
		if initiator != "" && c.ConnectorID != initiator {
			return fmt.Errorf("node %s has iqn connector %s already, not %s: Ironic would export to that one (leave out --initiator, or delete that connector): %w",
				display(p.node), connector.Quote(c.ConnectorID), initiator, ErrNotReady)
		}
		p.iqn = c.ConnectorID
		return nil
	}
	if initiator == "" {
		return fmt.Errorf("node %s: %w (give its iSCSI name with --initiator)", display(p.node), ErrNoInitiator)
	}
	p.iqn, p.newIQN = initiator, true
	return nil
}

// planTarget finds the volume's boot target, and refuses another volume
// at boot index 0 or this volume at another index.
func (m *Manager) planTarget(ctx context.Context, p *bootPlan) error {
	targets, err := ironicapi.AllTargets(ctx, ironicapi.ListNodeTargets(m.Ironic, p.node.UUID, nil), 0)
	if err != nil {
		return err
	}
	for _, t := range targets {
		switch {
		case t.VolumeID == p.vol.ID && t.BootIndex == 0:
			p.target = t.UUID
		case t.VolumeID == p.vol.ID:
			return fmt.Errorf("node %s has volume %s at boot index %d (target %s); it must be 0 to boot from it: %w", display(p.node), p.vol.ID, t.BootIndex, t.UUID, ErrNotReady)
		case t.BootIndex == 0:
			return fmt.Errorf("node %s boots from volume %s (target %s, boot index 0): %w", display(p.node), t.VolumeID, t.UUID, ErrNotReady)
		}
	}
	return nil
}

// planNodePatch plans the interfaces, the capability and the record.
func planNodePatch(p *bootPlan, deploy bool) error {
	n := p.node
	if n.StorageInterface != StorageInterface {
		p.patch = append(p.patch, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/storage_interface", Value: StorageInterface})
		p.rec.StorageInterfaceWas = keep(p.rec.StorageInterfaceWas, n.StorageInterface)
	}
	if n.BootInterface != BootInterface {
		p.patch = append(p.patch, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/boot_interface", Value: BootInterface})
		p.rec.BootInterfaceWas = keep(p.rec.BootInterfaceWas, n.BootInterface)
	}
	cur := n.Properties["capabilities"]
	was, _, err := capabilityValue(cur, BootCapability)
	if err != nil {
		return fmt.Errorf("node %s: stored capabilities: %w", display(n), err)
	}
	if was != "True" {
		value, _, err := mergeCapabilities(cur, []Capability{{Key: BootCapability, Value: "True"}})
		if err != nil {
			return err
		}
		p.patch = append(p.patch, nodes.UpdateOperation{Op: nodes.AddOp, Path: "/properties/capabilities", Value: value})
		p.rec.CapabilityWas = keep(p.rec.CapabilityWas, was)
	}
	p.deploy = deploy && n.ProvisionState != stateActive
	p.rec.Deployed = p.rec.Deployed || p.deploy
	return nil
}

// keep returns old when brick recorded a value before, else cur.
func keep(old *string, cur string) *string {
	if old != nil {
		return old
	}
	return &cur
}

// checkStates refuses changes the node's states would not allow, or
// that brick could not roll back.
func checkStates(p *bootPlan) error {
	n := p.node
	if !p.changes() {
		return nil
	}
	switch n.ProvisionState {
	case "enroll", "manageable", stateAvailable:
	case stateActive:
		return fmt.Errorf("node %s is active (deployed) without all of boot from volume: undeploy it first: %w", display(n), ErrNotReady)
	default:
		return fmt.Errorf("node %s is %s: its interfaces can change only in enroll, manageable or available: %w", display(n), connector.Quote(n.ProvisionState), ErrNotReady)
	}
	if p.deploy && n.ProvisionState != stateAvailable {
		return fmt.Errorf("node %s is %s: --deploy needs it available (baremetal node manage, then provide): %w", display(n), n.ProvisionState, ErrNotReady)
	}
	if n.PowerState == ironicapi.PowerOn {
		return fmt.Errorf("node %s is powered on: Ironic changes volume targets only while it is off, so a failure could not be undone: power it off first: %w", display(n), ErrNotReady)
	}
	return nil
}

// applyBoot runs the planned changes as steps; a failed step undoes the
// ones before it.
func (m *Manager) applyBoot(ctx context.Context, p *bootPlan, o BootOpts, res *BootResult) error {
	uuid := p.node.UUID
	var steps []rollback.Step
	if p.newIQN {
		steps = append(steps, m.connectorStep(p, res))
	}
	if p.target == "" {
		steps = append(steps, m.targetStep(p, res))
	}
	if len(p.patch) > 0 || !p.hadRecord || !reflect.DeepEqual(p.rec, m.storedRecord(p)) {
		steps = append(steps, m.nodePatchStep(p, res))
	}
	if p.deploy {
		steps = append(steps, rollback.Step{Name: "deploy", UndoName: "undeploy",
			Do: func(ctx context.Context) error {
				if err := ironicapi.SetProvisionState(ctx, m.Ironic, uuid, nodes.TargetActive); err != nil {
					return err
				}
				res.Changes = append(res.Changes, "deployed the node")
				return provision{ironic: m.Ironic, o: o}.wait(ctx, uuid, stateActive)
			},
			Undo: func(ctx context.Context) error { return provision{ironic: m.Ironic, o: o}.undeploy(ctx, uuid) }})
	}
	j := rollback.Journal{Timeout: m.UndoTimeout, Log: m.Log}
	if err := j.Run(ctx, steps...); err != nil {
		if uerr := j.Rollback(ctx); uerr != nil {
			m.log().Error("boot-from-volume: undo failed", "node", uuid, "err", uerr.Error())
			err = fmt.Errorf("%w (undo also failed: %v)", err, uerr)
		}
		return err
	}
	return nil
}

// storedRecord is the record as the node has it now (zero when none).
func (m *Manager) storedRecord(p *bootPlan) BootRecord {
	r, _, _ := ReadBootRecord(p.node)
	return r
}

func (m *Manager) connectorStep(p *bootPlan, res *BootResult) rollback.Step {
	var made string
	return rollback.Step{Name: "create connector", UndoName: "delete connector",
		Do: func(ctx context.Context) error {
			c, err := ironicapi.CreateConnector(ctx, m.Ironic, ironicapi.ConnectorCreateOpts{NodeUUID: p.node.UUID, Type: ironicapi.ConnectorIQN, ConnectorID: p.iqn}).Extract()
			if err != nil {
				return err
			}
			made, p.rec.ConnectorUUID = c.UUID, c.UUID
			res.Changes = append(res.Changes, "registered iqn connector "+p.iqn)
			return nil
		},
		Undo: func(ctx context.Context) error {
			return deleteGone(ironicapi.DeleteConnector(ctx, m.Ironic, made).ExtractErr(), made)
		}}
}

func (m *Manager) targetStep(p *bootPlan, res *BootResult) rollback.Step {
	var made string
	return rollback.Step{Name: "create target", UndoName: "delete target",
		Do: func(ctx context.Context) error {
			t, err := ironicapi.CreateTarget(ctx, m.Ironic, ironicapi.TargetCreateOpts{
				NodeUUID: p.node.UUID, VolumeType: "iscsi", BootIndex: 0, VolumeID: p.vol.ID,
				Properties: map[string]any{},
			}).Extract()
			if err != nil {
				return err
			}
			made, p.target, p.rec.TargetUUID = t.UUID, t.UUID, t.UUID
			res.Changes = append(res.Changes, "created boot target "+t.UUID+" (boot index 0)")
			return nil
		},
		Undo: func(ctx context.Context) error {
			return deleteGone(ironicapi.DeleteTarget(ctx, m.Ironic, made).ExtractErr(), made)
		}}
}

// nodePatchStep sets the interfaces and the capability and stores the
// record, in one PATCH; its undo puts the node back as it was.
func (m *Manager) nodePatchStep(p *bootPlan, res *BootResult) rollback.Step {
	var done bool
	return rollback.Step{Name: "update node", UndoName: "restore node",
		Do: func(ctx context.Context) error {
			patch := nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/extra/" + RecordKey, Value: recordValue(p.rec)}}
			for _, op := range p.patch {
				patch = append(patch, op)
			}
			if err := ironicapi.UpdateNode(ctx, m.Ironic, p.node.UUID, patch).Err; err != nil {
				return err
			}
			done = true
			for _, op := range p.patch {
				res.Changes = append(res.Changes, fmt.Sprintf("set %s to %v", strings.TrimPrefix(op.Path, "/"), op.Value))
			}
			return nil
		},
		Undo: func(ctx context.Context) error {
			if !done {
				return nil
			}
			return ironicapi.UpdateNode(ctx, m.Ironic, p.node.UUID, revertPatch(p)).Err
		}}
}

// revertPatch puts back what the node had before this run's PATCH.
func revertPatch(p *bootPlan) nodes.UpdateOpts {
	n := p.node
	var out nodes.UpdateOpts
	for _, op := range p.patch {
		switch op.Path {
		case "/storage_interface":
			out = append(out, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: op.Path, Value: n.StorageInterface})
		case "/boot_interface":
			out = append(out, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: op.Path, Value: n.BootInterface})
		default:
			if caps, ok := n.Properties["capabilities"]; ok {
				out = append(out, nodes.UpdateOperation{Op: nodes.AddOp, Path: op.Path, Value: caps})
			} else {
				out = append(out, nodes.UpdateOperation{Op: nodes.RemoveOp, Path: op.Path})
			}
		}
	}
	if raw, ok := n.Extra[RecordKey]; ok && p.hadRecord {
		return append(out, nodes.UpdateOperation{Op: nodes.AddOp, Path: "/extra/" + RecordKey, Value: raw})
	}
	return append(out, nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/extra/" + RecordKey})
}

// deleteGone treats a resource already gone (or never made) as deleted.
func deleteGone(err error, id string) error {
	if id == "" || errors.Is(err, apierr.ErrNotFound) {
		return nil
	}
	return err
}

// recordValue is the record as a JSON object for the node's extra.
func recordValue(r BootRecord) map[string]any {
	b, _ := json.Marshal(r)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// ReadBootRecord returns what brick recorded in the node's extra, and
// whether there is a record. A record that is not brick's shape is an
// error: brick will not guess what to undo.
func ReadBootRecord(n *nodes.Node) (BootRecord, bool, error) {
	var r BootRecord
	raw, ok := n.Extra[RecordKey]
	if !ok || raw == nil {
		return r, false, nil
	}
	b, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err == nil && !ident.IsUUID(r.VolumeID) {
		err = fmt.Errorf("volume_id %s is not a UUID", connector.Quote(r.VolumeID))
	}
	for _, id := range []string{r.TargetUUID, r.ConnectorUUID} {
		if err == nil && id != "" && !ident.IsUUID(id) {
			err = fmt.Errorf("%s is not a UUID", connector.Quote(id))
		}
	}
	if err != nil {
		return BootRecord{}, false, fmt.Errorf("node %s: extra %s is not brick's record (%v); remove it by hand if it is stale: %w", display(n), RecordKey, err, ErrNotReady)
	}
	return r, true, nil
}

// nextSteps are the commands left for a node set up to boot from volume.
func nextSteps(n *nodes.Node) []string {
	switch n.ProvisionState {
	case stateActive:
		return nil
	case "enroll":
		return []string{"baremetal node manage " + n.UUID, "baremetal node provide " + n.UUID, "baremetal node deploy " + n.UUID}
	case "manageable":
		return []string{"baremetal node provide " + n.UUID, "baremetal node deploy " + n.UUID}
	}
	return []string{"baremetal node deploy " + n.UUID}
}
