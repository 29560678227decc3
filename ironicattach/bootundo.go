package ironicattach

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/ironicapi"
)

// UndoResult says what the undo of boot-from-volume reversed.
type UndoResult struct {
	Node    nodes.Node
	Record  BootRecord
	Changes []string // empty when brick had recorded nothing
}

// UndoBootFromVolume reverses what BootFromVolume recorded in the node's
// extra, newest first: the deploy (only when brick deployed), the target
// and connector it created, the interfaces and capability it changed,
// then the record. What brick did not make stays. Running it again after
// a partial failure finishes the job.
func (m *Manager) UndoBootFromVolume(ctx context.Context, o BootOpts) (*UndoResult, error) {
	m = m.forBoot()
	op := fmt.Sprintf("boot-from-volume --undo node %s", o.Node)
	node, err := ironicapi.GetNode(ctx, m.Ironic, o.Node).Extract()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	rec, had, err := ReadBootRecord(node)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	res := &UndoResult{Node: *node, Record: rec}
	if !had {
		return res, nil
	}
	if err := (bootUndo{m: m, o: o}).run(ctx, node, rec, res); err != nil {
		return res, fmt.Errorf("%s: %w", op, err)
	}
	if n, err := ironicapi.GetNode(ctx, m.Ironic, node.UUID).Extract(); err == nil {
		res.Node = *n
	}
	return res, nil
}

// bootUndo is one undo of boot-from-volume under way.
type bootUndo struct {
	m *Manager
	o BootOpts
}

// run reverses rec on node, newest first, noting each change in res.
func (u bootUndo) run(ctx context.Context, node *nodes.Node, rec BootRecord, res *UndoResult) error {
	m, o := u.m, u.o
	switch {
	case node.ProvisionState == stateActive || node.ProvisionState == stateDeployFailed:
		if !rec.Deployed {
			return fmt.Errorf("node %s is %s and brick did not deploy it: undeploy it first (baremetal node undeploy %s): %w", display(node), node.ProvisionState, node.UUID, ErrNotReady)
		}
		if err := (provision{ironic: m.Ironic, o: o}).undeploy(ctx, node.UUID); err != nil {
			return err
		}
		res.Changes = append(res.Changes, "undeployed the node")
	case node.PowerState == ironicapi.PowerOn && rec.TargetUUID != "":
		return fmt.Errorf("node %s is powered on (it may be running from the volume): power it off first: %w", display(node), ErrNotReady)
	}
	if rec.TargetUUID != "" {
		if err := deleteGone(ironicapi.DeleteTarget(ctx, m.Ironic, rec.TargetUUID).ExtractErr(), rec.TargetUUID); err != nil {
			return err
		}
		res.Changes = append(res.Changes, "deleted boot target "+rec.TargetUUID)
	}
	if rec.ConnectorUUID != "" {
		if err := deleteGone(ironicapi.DeleteConnector(ctx, m.Ironic, rec.ConnectorUUID).ExtractErr(), rec.ConnectorUUID); err != nil {
			return err
		}
		res.Changes = append(res.Changes, "deleted connector "+rec.ConnectorUUID)
	}
	cur, err := ironicapi.GetNode(ctx, m.Ironic, node.UUID).Extract()
	if err != nil {
		return err
	}
	if err := u.restoreNode(ctx, node.UUID, cur, rec); err != nil {
		return err
	}
	res.Changes = append(res.Changes, "restored the node's interfaces and capabilities, removed brick's record")
	return nil
}

// restoreNode puts back the interfaces and capability brick changed, and
// drops the record.
func (u bootUndo) restoreNode(ctx context.Context, uuid string, cur *nodes.Node, rec BootRecord) error {
	var patch nodes.UpdateOpts
	restore := func(path string, was *string) {
		switch {
		case was == nil:
		case *was == "":
			patch = append(patch, nodes.UpdateOperation{Op: nodes.RemoveOp, Path: path})
		default:
			patch = append(patch, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: path, Value: *was})
		}
	}
	restore("/storage_interface", rec.StorageInterfaceWas)
	restore("/boot_interface", rec.BootInterfaceWas)
	if rec.CapabilityWas != nil {
		value, err := setCapability(cur.Properties["capabilities"], BootCapability, *rec.CapabilityWas)
		if err != nil {
			return fmt.Errorf("node %s: stored capabilities: %w", display(cur), err)
		}
		patch = append(patch, nodes.UpdateOperation{Op: nodes.AddOp, Path: "/properties/capabilities", Value: value})
	}
	if _, ok := cur.Extra[RecordKey]; ok {
		patch = append(patch, nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/extra/" + RecordKey})
	}
	if len(patch) == 0 {
		return nil
	}
	return ironicapi.UpdateNode(ctx, u.m.Ironic, uuid, patch).Err
}

// provision drives a node's deploy and undeploy, waiting as o says.
type provision struct {
	ironic *gophercloud.ServiceClient
	o      BootOpts
}

// undeploy asks Ironic to tear the node down and waits for available.
func (p provision) undeploy(ctx context.Context, uuid string) error {
	n, err := ironicapi.GetNode(ctx, p.ironic, uuid).Extract()
	if err != nil {
		return err
	}
	if n.ProvisionState == stateAvailable {
		return nil
	}
	if err := ironicapi.SetProvisionState(ctx, p.ironic, uuid, nodes.TargetDeleted); err != nil {
		return err
	}
	return p.wait(ctx, uuid, stateAvailable)
}

// wait polls the node until it reaches want, fails on a failed state
// (with Ironic's last_error), or o.Wait ends.
func (p provision) wait(ctx context.Context, uuid, want string) error {
	wait, poll := p.o.Wait, p.o.Poll
	if wait <= 0 {
		wait = 10 * time.Minute
	}
	if poll <= 0 {
		poll = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last *nodes.Node
	err := host.FS{}.WaitFor(ctx, nil, host.Backoff{Min: poll, Max: poll}, func() (bool, error) {
		n, err := ironicapi.GetNode(ctx, p.ironic, uuid).Extract()
		if err != nil {
			return false, fmt.Errorf("wait for %s: %w", want, err)
		}
		last = n
		switch n.ProvisionState {
		case stateDeployFailed, "error", "clean failed":
			return false, fmt.Errorf("node %s is %s: %s", display(n), n.ProvisionState, connector.Quote(n.LastError))
		}
		return n.ProvisionState == want && n.TargetProvisionState == "", nil
	})
	if errors.Is(err, host.ErrWaitTimeout) && last != nil {
		return fmt.Errorf("node %s still %s after %s, not %s: %w", display(last), last.ProvisionState, wait, want, err)
	}
	return err
}

// capabilityValue returns a capability's value in the stored capabilities
// (a "k:v,..." string or a JSON object) and whether it is there.
func capabilityValue(cur any, key string) (string, bool, error) {
	if m, ok := cur.(map[string]any); ok {
		v, ok := m[key]
		if !ok {
			return "", false, nil
		}
		return fmt.Sprint(v), true, nil
	}
	str, _ := cur.(string)
	caps, err := ParseCapabilities(str)
	if err != nil {
		return "", false, err
	}
	for _, c := range caps {
		if c.Key == key {
			return c.Value, true, nil
		}
	}
	return "", false, nil
}

// setCapability sets key to value in the stored capabilities, or drops it
// when value is "", keeping the others and the stored form.
func setCapability(cur any, key, value string) (any, error) {
	if value != "" {
		v, _, err := mergeCapabilities(cur, []Capability{{Key: key, Value: value}})
		return v, err
	}
	if m, ok := cur.(map[string]any); ok {
		m = maps.Clone(m)
		delete(m, key)
		return m, nil
	}
	str, _ := cur.(string)
	caps, err := ParseCapabilities(str)
	if err != nil {
		return nil, err
	}
	kept := caps[:0]
	for _, c := range caps {
		if c.Key != key {
			kept = append(kept, c)
		}
	}
	return FormatCapabilities(kept), nil
}
