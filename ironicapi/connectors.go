package ironicapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brick-storage/brick/ident"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// Connector is an Ironic volume connector: one storage initiator of a node.
type Connector struct {
	UUID        string         `json:"uuid"`
	NodeUUID    string         `json:"node_uuid"`
	Type        string         `json:"type"`
	ConnectorID string         `json:"connector_id"`
	Extra       map[string]any `json:"extra"`
	CreatedAt   time.Time      `json:"created_at"`
	// UpdatedAt is zero when the connector was never changed.
	UpdatedAt time.Time `json:"updated_at"`
	Links     []any     `json:"links"`
}

// ConnectorPage is one page of ListConnectors.
type ConnectorPage struct{ volumePage }

// ExtractConnectors returns the connectors of a page.
func ExtractConnectors(p pagination.Page) ([]Connector, error) {
	var s []Connector
	err := p.(ConnectorPage).ExtractIntoSlicePtr(&s, "connectors")
	return s, err
}

// ConnectorListOptsBuilder builds the query of a connector list.
type ConnectorListOptsBuilder interface {
	ToVolumeConnectorListQuery() (string, error)
}

// ConnectorListOpts filter, sort and page a connector list.
type ConnectorListOpts struct {
	// Node limits the list to one node (name or UUID).
	Node string
	// Detail returns every field (extra, created_at, updated_at too).
	Detail bool
	// Fields returns only these fields (see ConnectorFields); not with Detail.
	Fields []string
	// Limit is the page size (Ironic caps it at its [api] max_limit).
	Limit int
	// Marker is the UUID of the last connector already seen.
	Marker string
	// SortKey and SortDir ("asc" or "desc") order the list.
	SortKey, SortDir string
}

// ToVolumeConnectorListQuery validates the options and builds the query.
func (o ConnectorListOpts) ToVolumeConnectorListQuery() (string, error) {
	return listOpts(o).query(ConnectorFields)
}

// ListConnectors lists volume connectors. Every page keeps every filter.
func ListConnectors(client *gophercloud.ServiceClient, opts ConnectorListOptsBuilder) pagination.Pager {
	return connectorKind().list(client, connectorKind().collectionURL(client), connectorQuery(opts))
}

// ListNodeConnectors lists the connectors of one node through
// /v1/nodes/<uuid>/volume/connectors (which accepts a UUID only).
func ListNodeConnectors(client *gophercloud.ServiceClient, nodeUUID string, opts ConnectorListOptsBuilder) pagination.Pager {
	return connectorKind().listNode(client, nodeUUID, connectorQuery(opts))
}

// connectorQuery is nil when there are no options.
func connectorQuery(opts ConnectorListOptsBuilder) func() (string, error) {
	if opts == nil {
		return nil
	}
	return opts.ToVolumeConnectorListQuery
}

// AllConnectors collects up to max connectors (0: all) from pager, with
// errors converted to *Error.
func AllConnectors(ctx context.Context, pager pagination.Pager, max int) ([]Connector, error) {
	return collect(ctx, pager, call{op: "list", resource: "volume connectors"}, ExtractConnectors, max)
}

// ConnectorResult is the answer to a get, create or update.
type ConnectorResult struct{ gophercloud.Result }

// Extract returns the connector.
func (r ConnectorResult) Extract() (*Connector, error) {
	var c Connector
	if err := r.ExtractIntoStructPtr(&c, ""); err != nil {
		return nil, err
	}
	return &c, nil
}

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
// state; a type+ID registered anywhere already gives ErrConflict.
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
		switch {
		case op.Path == "/node_uuid":
			if s, _ := op.Value.(string); op.Op == "remove" || !ident.IsUUID(s) {
				return nil, fmt.Errorf("node_uuid must be replaced by a node UUID")
			}
		case op.Path == "/type":
			s, _ := op.Value.(string)
			if op.Op == "remove" {
				return nil, fmt.Errorf("type cannot be removed")
			}
			typ = s
		case op.Path == "/connector_id":
			s, _ := op.Value.(string)
			if op.Op == "remove" {
				return nil, fmt.Errorf("connector_id cannot be removed")
			}
			id = s
		case op.Path == "/extra":
		case strings.HasPrefix(op.Path, "/extra/"):
			if err := checkKeyPath(op.Path); err != nil {
				return nil, fmt.Errorf("patch %d: %w", i, err)
			}
		default:
			return nil, fmt.Errorf("patch %d: path %s cannot be changed (use /node_uuid, /type, /connector_id or /extra/KEY)", i, quote(op.Path))
		}
	}
	switch {
	case typ != "" && id != "":
		norm, err := NormalizeConnectorID(typ, id)
		if err != nil {
			return nil, err
		}
		for i := range o {
			if o[i].Path == "/connector_id" {
				o[i].Value = norm
			}
		}
	case typ != "":
		if !slices.Contains(ConnectorTypes, typ) {
			return nil, fmt.Errorf("connector type %s is not one of %s", quote(typ), strings.Join(ConnectorTypes, ", "))
		}
	case id != "":
		if err := checkConnectorIDText(id); err != nil {
			return nil, err
		}
	}
	return patchBody(o)
}

// UpdateConnector applies a JSON patch to a connector. Ironic refuses it
// (ErrNotPoweredOff) unless the node is powered off.
func UpdateConnector(ctx context.Context, client *gophercloud.ServiceClient, id string, opts ConnectorUpdateOptsBuilder) ConnectorResult {
	return ConnectorResult{connectorKind().update(ctx, client, id, opts.ToVolumeConnectorUpdateMap)}
}

// DeleteResult is the answer to a delete; see ExtractErr.
type DeleteResult struct{ gophercloud.ErrResult }

// DeleteConnector deletes a connector. Ironic refuses it
// (ErrNotPoweredOff) unless the node is powered off.
func DeleteConnector(ctx context.Context, client *gophercloud.ServiceClient, id string) DeleteResult {
	return connectorKind().delete(ctx, client, id)
}
