package ironicapi

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/brick-storage/brick/ident"
	"github.com/brick-storage/brick/osauth"
)

// volumePage is one page of a connector or target list.
type volumePage struct {
	pagination.LinkedPageBase
	key string // "connectors" or "targets"
}

// NextPageURL follows Ironic's "next" link without trusting it: Ironic
// rebuilds that link from the resource collection URL, which drops the
// node= filter and the /v1/nodes/<uuid>/ prefix, so its second page holds
// every node's records (ironicclient follows it as is). Only the marker is
// taken from it; path and filters come from the page just fetched, and so
// from the first request. That also keeps the scheme and host the client
// used, where Ironic behind a proxy may advertise an internal address.
func (p volumePage) NextPageURL() (string, error) {
	var s struct {
		Next string `json:"next"`
	}
	if err := p.ExtractInto(&s); err != nil {
		return "", err
	}
	if s.Next == "" {
		return "", nil
	}
	return nextURL(p.URL, s.Next)
}

// errNoMarker: a "next" link without marker would fetch the same page forever.
var errNoMarker = osauth.ErrNoMarker

// nextURL is osauth.NextPage, the pager rule brick's clients share.
func nextURL(cur url.URL, next string) (string, error) {
	u, err := osauth.NextPage(cur, next)
	if err != nil {
		return "", fmt.Errorf("ironic list: %w", err)
	}
	return u, nil
}

// IsEmpty reports whether the page holds no records.
func (p volumePage) IsEmpty() (bool, error) {
	if p.StatusCode == 204 {
		return true, nil
	}
	var s []any
	if err := p.ExtractIntoSlicePtr(&s, p.key); err != nil {
		return false, err
	}
	return len(s) == 0, nil
}

// ListOpts are the query parameters Ironic's volume lists accept (see
// ConnectorListOpts and TargetListOpts).
type ListOpts struct {
	// Node limits the list to one node (name or UUID).
	Node string `q:"node"`
	// Detail returns every field (extra, created_at, updated_at too).
	Detail bool `q:"detail"`
	// Fields returns only these fields (see ConnectorFields, TargetFields); not with Detail.
	Fields []string `q:"fields" format:"comma-separated"`
	// Limit is the page size (Ironic caps it at its [api] max_limit).
	Limit int `q:"limit"`
	// Marker is the UUID of the last record already seen.
	Marker string `q:"marker"`
	// SortKey and SortDir ("asc" or "desc") order the list.
	SortKey string `q:"sort_key"`
	SortDir string `q:"sort_dir"`
}

// ListOptsBuilder builds the query of a connector or target list.
type ListOptsBuilder interface {
	ToVolumeListQuery() (string, error)
}

// ToVolumeListQuery validates the options and builds the query; the
// fields are checked against the resource's when the list is made.
func (o ListOpts) ToVolumeListQuery() (string, error) { return o.query() }

func (o ListOpts) query() (string, error) {
	if o.Node != "" && !ValidNodeIdent(o.Node) {
		return "", fmt.Errorf("node %s is not a node name or UUID", quote(o.Node))
	}
	if o.Detail && len(o.Fields) > 0 {
		return "", errors.New("fields and detail cannot be combined")
	}
	if o.Limit < 0 {
		return "", fmt.Errorf("limit %d is negative", o.Limit)
	}
	if o.Marker != "" && !ident.IsUUID(o.Marker) {
		return "", fmt.Errorf("marker %s is not a UUID", quote(o.Marker))
	}
	if err := checkSort(o.SortKey, o.SortDir); err != nil {
		return "", err
	}
	q, err := gophercloud.BuildQueryString(o)
	if err != nil {
		return "", err
	}
	if o.Detail {
		// Ironic wants a Python-style boolean.
		v := q.Query()
		v.Set("detail", "True")
		q.RawQuery = v.Encode()
	}
	return q.String(), nil
}

// collect walks a pager, converting errors, up to max records (0: all).
func collect[T any](ctx context.Context, pager pagination.Pager, c call, extract func(pagination.Page) ([]T, error), max int) ([]T, error) {
	var out []T
	var guard osauth.PageGuard
	err := pager.EachPage(ctx, func(_ context.Context, page pagination.Page) (bool, error) {
		items, err := extract(page)
		if err != nil {
			return false, err
		}
		for _, it := range items {
			if max > 0 && len(out) >= max {
				return false, nil
			}
			out = append(out, it)
		}
		if max > 0 && len(out) >= max {
			return false, nil
		}
		return true, guard.Next(page, len(out))
	})
	if err != nil {
		return nil, convert(c, err)
	}
	return out, nil
}
