package ironicapi

import (
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// VolumeConnector is an Ironic volume connector: one storage initiator of
// a node.
type VolumeConnector struct {
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
func ExtractConnectors(p pagination.Page) ([]VolumeConnector, error) {
	return extractPage[VolumeConnector](p.(ConnectorPage).volumePage)
}

// AllConnectors collects up to max connectors (0: all) from pager, with
// errors converted to *apierr.Error.
func AllConnectors(ctx context.Context, pager pagination.Pager, max int) ([]VolumeConnector, error) {
	return collect(ctx, pager, call{op: "list", resource: "volume connectors"}, ExtractConnectors, max)
}

// ConnectorResult is the answer to a get, create or update; see Extract.
type ConnectorResult struct{ gophercloud.Result }

// Extract returns the connector.
func (r ConnectorResult) Extract() (*VolumeConnector, error) {
	return extractOne[VolumeConnector](r.Result)
}

// DeleteResult is the answer to a delete; see ExtractErr.
type DeleteResult struct{ gophercloud.ErrResult }

// extractOne decodes a single resource.
func extractOne[T any](r gophercloud.Result) (*T, error) {
	var v T
	if err := r.ExtractIntoStructPtr(&v, ""); err != nil {
		return nil, err
	}
	return &v, nil
}

// extractPage decodes the records of a list page.
func extractPage[T any](p volumePage) ([]T, error) {
	var s []T
	err := p.ExtractIntoSlicePtr(&s, p.key)
	return s, err
}
