package ironicapi

import (
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// TargetResult is the answer to a get, create or update; see Extract.
type TargetResult struct{ gophercloud.Result }

// Extract returns the target.
func (r TargetResult) Extract() (*VolumeTarget, error) { return extractOne[VolumeTarget](r.Result) }

// TargetPage is one page of ListTargets.
type TargetPage struct{ volumePage }

// ExtractTargets returns the targets of a page.
func ExtractTargets(p pagination.Page) ([]VolumeTarget, error) {
	return extractPage[VolumeTarget](p.(TargetPage).volumePage)
}

// AllTargets collects up to max targets (0: all) from pager, with errors
// converted to *apierr.Error.
func AllTargets(ctx context.Context, pager pagination.Pager, max int) ([]VolumeTarget, error) {
	return collect(ctx, pager, call{op: "list", resource: "volume targets"}, ExtractTargets, max)
}

// VolumeTarget is an Ironic volume target: a volume a node uses, with the
// connection properties to reach it. Ironic shows secret properties
// (auth_password, ...) as "******".
type VolumeTarget struct {
	UUID       string         `json:"uuid"`
	NodeUUID   string         `json:"node_uuid"`
	VolumeType string         `json:"volume_type"`
	Properties map[string]any `json:"properties"`
	BootIndex  int            `json:"boot_index"`
	VolumeID   string         `json:"volume_id"`
	Extra      map[string]any `json:"extra"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
	Links      []any          `json:"links"`
}
