package ironicapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/brick-storage/brick/ident"
	"github.com/gophercloud/gophercloud/v2"
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
	Created []Connector
	Kept    []Connector
	Pruned  []Connector
}

// Register makes the node's volume connectors match want. It is
// idempotent: connectors the node has already are kept; a wanted
// connector registered to another node fails the whole call before
// anything is created (Ironic allows a type+ID on one node only), naming
// that node. IDs are normalized (NormalizeConnectorID) before comparing.
func Register(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string, want []ConnectorSpec, opts RegisterOpts) (*RegisterResult, error) {
	op := "register connectors of node " + quote(nodeUUID)
	if !ident.IsUUID(nodeUUID) {
		return nil, invalid(op, "node", "%s is not a UUID (resolve names with ResolveNode)", quote(nodeUUID))
	}
	norm := make([]ConnectorSpec, 0, len(want))
	for _, w := range want {
		id, err := NormalizeConnectorID(w.Type, w.ConnectorID)
		if err != nil {
			return nil, &Error{Op: op, Message: err.Error(), Kind: ErrInvalid}
		}
		s := ConnectorSpec{Type: w.Type, ConnectorID: id}
		if !slices.Contains(norm, s) {
			norm = append(norm, s)
		}
	}
	have, err := AllConnectors(ctx, ListNodeConnectors(client, nodeUUID, ConnectorListOpts{Detail: true}), 0)
	if err != nil {
		return nil, err
	}
	res := &RegisterResult{}
	var missing []ConnectorSpec
	for _, w := range norm {
		if i := slices.IndexFunc(have, func(c Connector) bool { return sameConnector(c, w) }); i >= 0 {
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
	for _, w := range missing {
		c, err := CreateConnector(ctx, client, ConnectorCreateOpts{NodeUUID: nodeUUID, Type: w.Type, ConnectorID: w.ConnectorID, Extra: opts.Extra}).Extract()
		if err != nil {
			return res, err
		}
		res.Created = append(res.Created, *c)
	}
	if !opts.Prune {
		return res, nil
	}
	types := opts.PruneTypes
	if len(types) == 0 {
		types = []string{ConnectorIQN, ConnectorWWPN, ConnectorWWNN, ConnectorIP, ConnectorMAC}
	}
	for _, c := range have {
		if !slices.Contains(types, c.Type) || slices.ContainsFunc(norm, func(w ConnectorSpec) bool { return sameConnector(c, w) }) {
			continue
		}
		if err := DeleteConnector(ctx, client, c.UUID).ExtractErr(); err != nil {
			return res, fmt.Errorf("prune %s connector %s: %w", c.Type, c.ConnectorID, err)
		}
		res.Pruned = append(res.Pruned, c)
	}
	return res, nil
}

// sameConnector compares an existing connector with a normalized spec,
// normalizing the stored ID too (it may have been created by another tool).
func sameConnector(c Connector, w ConnectorSpec) bool {
	if c.Type != w.Type {
		return false
	}
	id, err := NormalizeConnectorID(c.Type, c.ConnectorID)
	if err != nil {
		id = c.ConnectorID
	}
	if c.Type == ConnectorIQN {
		return strings.EqualFold(id, w.ConnectorID)
	}
	return id == w.ConnectorID
}

// checkOwners fails when another node holds one of the specs. Ironic has
// no filter by connector ID, so this walks the whole list once.
func checkOwners(ctx context.Context, client *gophercloud.ServiceClient, nodeUUID string, specs []ConnectorSpec, op string) error {
	all, err := AllConnectors(ctx, ListConnectors(client, ConnectorListOpts{Fields: []string{"uuid", "node_uuid", "type", "connector_id"}}), 0)
	if err != nil {
		return err
	}
	var msgs []string
	for _, w := range specs {
		for _, c := range all {
			if c.NodeUUID != nodeUUID && sameConnector(c, w) {
				owner := c.NodeUUID
				if n, err := GetNode(ctx, client, c.NodeUUID).Extract(); err == nil && n.Name != "" {
					owner = fmt.Sprintf("%s (%s)", n.Name, n.UUID)
				}
				msgs = append(msgs, fmt.Sprintf("%s %s is registered to node %s as connector %s", w.Type, w.ConnectorID, owner, c.UUID))
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &Error{Op: op, Message: strings.Join(msgs, "; "), Kind: ErrConflict,
		Hint: "a connector belongs to one node only: if that node no longer has it, delete it there (brick ironic connector delete UUID, with that node powered off), then run register again"}
}

// ErrNoInitiator: a node has no connector Cinder could export a volume to.
var ErrNoInitiator = errors.New("node has no iqn, wwpn or wwnn volume connector")

// CinderConnector builds the connector dict Cinder's
// initialize_connection / attachment create expects for a node from its
// Ironic volume connectors, the way Ironic's own cinder storage interface
// does: the first iqn is the initiator, the first ip the ip, every wwpn
// and wwnn is listed, host is the node UUID. It fails with ErrNoInitiator
// when there is nothing to export to.
func CinderConnector(nodeUUID string, conns []Connector, multipath bool) (map[string]any, error) {
	out := map[string]any{"host": nodeUUID, "multipath": multipath, "platform": "x86_64", "os_type": "linux"}
	var wwpns, wwnns []string
	initiator := false
	for _, c := range conns {
		id, err := NormalizeConnectorID(c.Type, c.ConnectorID)
		if err != nil {
			continue // stored by another tool in a form Cinder could not use
		}
		switch c.Type {
		case ConnectorIQN:
			if _, ok := out["initiator"]; !ok {
				out["initiator"] = id
				initiator = true
			}
		case ConnectorIP:
			if _, ok := out["ip"]; !ok {
				out["ip"] = id
			}
		case ConnectorWWPN:
			wwpns = append(wwpns, id)
		case ConnectorWWNN:
			wwnns = append(wwnns, id)
		}
	}
	if len(wwpns) > 0 {
		out["wwpns"] = wwpns
	}
	if len(wwnns) > 0 {
		out["wwnns"] = wwnns
	}
	if !initiator && len(wwpns) == 0 && len(wwnns) == 0 {
		return nil, fmt.Errorf("node %s: %w (register them with brick ironic register or brick ironic connector create)", nodeUUID, ErrNoInitiator)
	}
	return out, nil
}
