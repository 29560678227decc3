package ironicapi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/brick-storage/brick/ident"
)

// GetOpts choose the fields returned by a get.
type GetOpts struct {
	Fields []string `q:"fields" format:"comma-separated"`
}

// GetConnector fetches one connector by UUID; opts may be nil.
func GetConnector(ctx context.Context, client *gophercloud.ServiceClient, id string, opts *GetOpts) ConnectorResult {
	return ConnectorResult{connectorKind().get(ctx, client, id, opts)}
}

// ConnectorCreateOptsBuilder builds a connector create body.
type ConnectorCreateOptsBuilder interface {
	ToVolumeConnectorCreateMap() (map[string]any, error)
}

// ConnectorCreateOpts describe a new connector.
type ConnectorCreateOpts struct {
	// NodeUUID must be the node's UUID: Ironic rejects names here.
	NodeUUID string `json:"node_uuid"`
	// Type is one of ConnectorTypes.
	Type string `json:"type"`
	// ConnectorID is checked against Type's format and normalized.
	ConnectorID string `json:"connector_id"`
	// Extra is free-form metadata.
	Extra map[string]any `json:"extra,omitempty"`
	// UUID picks the connector's UUID; Ironic generates one when empty.
	UUID string `json:"uuid,omitempty"`
}

// ToVolumeConnectorCreateMap validates the options and builds the body.
func (o ConnectorCreateOpts) ToVolumeConnectorCreateMap() (map[string]any, error) {
	if !ident.IsUUID(o.NodeUUID) {
		return nil, fmt.Errorf("node_uuid %s is not a UUID (Ironic does not take node names here)", quote(o.NodeUUID))
	}
	id, err := NormalizeConnectorID(o.Type, o.ConnectorID)
	if err != nil {
		return nil, err
	}
	o.ConnectorID = id
	if o.UUID != "" && !ident.IsUUID(o.UUID) {
		return nil, fmt.Errorf("uuid %s is not a UUID", quote(o.UUID))
	}
	if err := checkKV("extra", o.Extra); err != nil {
		return nil, err
	}
	return gophercloud.BuildRequestBody(o, "")
}

// CreateConnector creates a connector. Ironic accepts this in any power
// state; a type+ID registered anywhere already gives apierr.ErrConflict.
func CreateConnector(ctx context.Context, client *gophercloud.ServiceClient, opts ConnectorCreateOptsBuilder) ConnectorResult {
	return ConnectorResult{connectorKind().create(ctx, client, opts.ToVolumeConnectorCreateMap)}
}

// ConnectorUpdateOptsBuilder builds a JSON-patch body for a connector.
type ConnectorUpdateOptsBuilder interface {
	ToVolumeConnectorUpdateMap() ([]map[string]any, error)
}

// ConnectorUpdateOpts is a JSON patch: see Replace, Add and Remove. Values
// are checked per path; /type and /connector_id changed together are
// checked as a pair (change one alone and the caller must check it against
// the current other one, as the brick CLI does).
type ConnectorUpdateOpts []PatchOp

// ToVolumeConnectorUpdateMap validates the patch and builds the body.
func (o ConnectorUpdateOpts) ToVolumeConnectorUpdateMap() ([]map[string]any, error) {
	var typ, id string
	for i, op := range o {
		var err error
		switch op.Path {
		case "/type":
			typ, err = replacedString(op, "type")
		case "/connector_id":
			id, err = replacedString(op, "connector_id")
		default:
			err = checkConnectorPatchPath(op)
		}
		if err != nil {
			return nil, fmt.Errorf("patch %d: %w", i, err)
		}
	}
	if err := o.checkTypeAndID(typ, id); err != nil {
		return nil, err
	}
	return patchBody(o)
}

// replacedString is the new value of a field that cannot be removed.
func replacedString(op PatchOp, field string) (string, error) {
	if op.Op == "remove" {
		return "", fmt.Errorf("%s cannot be removed", field)
	}
	s, _ := op.Value.(string)
	return s, nil
}

// checkConnectorPatchPath checks the paths other than /type and /connector_id.
func checkConnectorPatchPath(op PatchOp) error {
	switch {
	case op.Path == "/node_uuid":
		return checkNodeUUIDOp(op)
	case op.Path == "/extra":
		return nil
	case strings.HasPrefix(op.Path, "/extra/"):
		return checkKeyPath(op.Path)
	}
	return fmt.Errorf("path %s cannot be changed (use /node_uuid, /type, /connector_id or /extra/KEY)", quote(op.Path))
}

// checkTypeAndID checks a new type and ID as a pair, or each alone, and
// puts the normalized ID into the patch.
func (o ConnectorUpdateOpts) checkTypeAndID(typ, id string) error {
	switch {
	case typ != "" && id != "":
		norm, err := NormalizeConnectorID(typ, id)
		if err != nil {
			return err
		}
		for i := range o {
			if o[i].Path == "/connector_id" {
				o[i].Value = norm
			}
		}
	case typ != "":
		if !slices.Contains(ConnectorTypes, typ) {
			return fmt.Errorf("connector type %s is not one of %s", quote(typ), strings.Join(ConnectorTypes, ", "))
		}
	case id != "":
		return checkConnectorIDText(id)
	}
	return nil
}

// UpdateConnector applies a JSON patch to a connector. Ironic refuses it
// (apierr.ErrInvalidState) unless the node is powered off.
func UpdateConnector(ctx context.Context, client *gophercloud.ServiceClient, id string, opts ConnectorUpdateOptsBuilder) ConnectorResult {
	return ConnectorResult{connectorKind().update(ctx, client, id, opts.ToVolumeConnectorUpdateMap)}
}

// DeleteConnector deletes a connector. Ironic refuses it
// (apierr.ErrInvalidState) unless the node is powered off.
func DeleteConnector(ctx context.Context, client *gophercloud.ServiceClient, id string) DeleteResult {
	return connectorKind().delete(ctx, client, id)
}
