package ironicattach

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/ironicapi"
)

// ConnectorSpec is a connector a host has: a type and an ID.
type ConnectorSpec struct {
	Type        string
	ConnectorID string
}

func (s ConnectorSpec) String() string { return s.Type + " " + s.ConnectorID }

// RegisterOpts tune Register.
type RegisterOpts struct {
	// Prune deletes the node's connectors of PruneTypes that are not
	// wanted. Ironic allows that only while the node is powered off.
	Prune bool
	// PruneTypes are the types Prune may delete; empty means iqn, wwpn,
	// wwnn, ip and mac (what a host reports), never port or portgroup.
	PruneTypes []string
	// Extra is set on the connectors Register creates.
	Extra map[string]any
}

// RegisterResult says what Register did.
type RegisterResult struct {
	Created []ironicapi.VolumeConnector
	Kept    []ironicapi.VolumeConnector
	Pruned  []ironicapi.VolumeConnector
}

// Register makes the node's volume connectors match want. It is
// idempotent: connectors the node has already are kept; a wanted
// connector registered to another node fails the whole call before
// anything is created (Ironic allows a type+ID on one node only), naming
// that node. IDs are normalized (ironicapi.NormalizeConnectorID) before
// comparing.
func Register(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string, want []ConnectorSpec, opts RegisterOpts) (*RegisterResult, error) {
	op := "register connectors of node " + connector.Quote(nodeUUID)
	if !ident.IsUUID(nodeUUID) {
		return nil, invalid(op, "node: "+connector.Quote(nodeUUID)+" is not a UUID (resolve names with ResolveNode)")
	}
	norm, err := normalizeSpecs(want)
	if err != nil {
		return nil, invalid(op, err.Error())
	}
	have, err := ironicapi.AllConnectors(ctx, ironicapi.ListNodeConnectors(client, nodeUUID, ironicapi.ConnectorListOpts{Detail: true}), 0)
	if err != nil {
		return nil, err
	}
	res := &RegisterResult{}
	var missing []ConnectorSpec
	for _, w := range norm {
		if i := slices.IndexFunc(have, func(c ironicapi.VolumeConnector) bool { return sameConnector(c, w) }); i >= 0 {
			res.Kept = append(res.Kept, have[i])
		} else {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		if err := checkOwners(ctx, client, nodeUUID, missing, op); err != nil {
			return nil, err
		}
	}
	if err := res.create(ctx, client, nodeUUID, missing, opts.Extra); err != nil {
		return res, err
	}
	if !opts.Prune {
		return res, nil
	}
	return res, res.prune(ctx, client, have, norm, opts.PruneTypes)
}

func invalid(op, msg string) error {
	return &apierr.Error{Service: ironicapi.Service, Op: op, Message: msg, Kind: apierr.ErrInvalid}
}

// normalizeSpecs normalizes the IDs and drops duplicates.
func normalizeSpecs(want []ConnectorSpec) ([]ConnectorSpec, error) {
	norm := make([]ConnectorSpec, 0, len(want))
	for _, w := range want {
		id, err := ironicapi.NormalizeConnectorID(w.Type, w.ConnectorID)
		if err != nil {
			return nil, err
		}
		s := ConnectorSpec{Type: w.Type, ConnectorID: id}
		if !slices.Contains(norm, s) {
			norm = append(norm, s)
		}
	}
	return norm, nil
}

// create creates the missing connectors, recording each one made.
func (res *RegisterResult) create(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string, missing []ConnectorSpec, extra map[string]any) error {
	for _, w := range missing {
		c, err := ironicapi.CreateConnector(ctx, client, ironicapi.ConnectorCreateOpts{NodeUUID: nodeUUID, Type: w.Type, ConnectorID: w.ConnectorID, Extra: extra}).Extract()
		if err != nil {
			return err
		}
		res.Created = append(res.Created, *c)
	}
	return nil
}

// prune deletes the node's connectors of types that are not wanted.
func (res *RegisterResult) prune(ctx context.Context, client *gophercloud.ServiceClient, have []ironicapi.VolumeConnector, want []ConnectorSpec, types []string) error {
	if len(types) == 0 {
		types = []string{ironicapi.ConnectorIQN, ironicapi.ConnectorWWPN, ironicapi.ConnectorWWNN, ironicapi.ConnectorIP, ironicapi.ConnectorMAC}
	}
	for _, c := range have {
		if !slices.Contains(types, c.Type) || slices.ContainsFunc(want, func(w ConnectorSpec) bool { return sameConnector(c, w) }) {
			continue
		}
		if err := ironicapi.DeleteConnector(ctx, client, c.UUID).ExtractErr(); err != nil {
			return fmt.Errorf("prune %s connector %s: %w", c.Type, c.ConnectorID, err)
		}
		res.Pruned = append(res.Pruned, c)
	}
	return nil
}

// sameConnector compares an existing connector with a normalized spec,
// normalizing the stored ID too (it may have been created by another tool).
func sameConnector(c ironicapi.VolumeConnector, w ConnectorSpec) bool {
	if c.Type != w.Type {
		return false
	}
	id, err := ironicapi.NormalizeConnectorID(c.Type, c.ConnectorID)
	if err != nil {
		id = c.ConnectorID
	}
	if c.Type == ironicapi.ConnectorIQN {
		return strings.EqualFold(id, w.ConnectorID)
	}
	return id == w.ConnectorID
}

// checkOwners fails when another node holds one of the specs. Ironic has
// no filter by connector ID, so this walks the whole list once.
func checkOwners(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string, specs []ConnectorSpec, op string) error {
	all, err := ironicapi.AllConnectors(ctx, ironicapi.ListConnectors(client, ironicapi.ConnectorListOpts{Fields: []string{"uuid", "node_uuid", "type", "connector_id"}}), 0)
	if err != nil {
		return err
	}
	var msgs []string
	for _, w := range specs {
		for _, c := range all {
			if c.NodeUUID != nodeUUID && sameConnector(c, w) {
				owner := c.NodeUUID
				if n, err := ironicapi.GetNode(ctx, client, c.NodeUUID).Extract(); err == nil && n.Name != "" {
					owner = fmt.Sprintf("%s (%s)", n.Name, n.UUID)
				}
				msgs = append(msgs, fmt.Sprintf("%s %s is registered to node %s as connector %s", w.Type, w.ConnectorID, owner, c.UUID))
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &apierr.Error{Service: ironicapi.Service, Op: op, Message: strings.Join(msgs, "; "), Kind: apierr.ErrConflict,
		Hint: "a connector belongs to one node only: if that node no longer has it, delete it there (brick ironic connector delete UUID, with that node powered off), then run register again"}
}
