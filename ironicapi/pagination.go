package ironicapi

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/brick-storage/brick/ident"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
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
var errNoMarker = errors.New("ironic list: next link has no marker")

// nextURL returns cur with its marker replaced by the one in next.
func nextURL(cur url.URL, next string) (string, error) {
	n, err := url.Parse(next)
	if err != nil {
		return "", fmt.Errorf("ironic list: bad next link: %w", err)
	}
	marker := n.Query().Get("marker")
	if marker == "" {
		return "", errNoMarker
	}
	q := cur.Query()
	if q.Get("marker") == marker {
		return "", fmt.Errorf("ironic list: next link repeats marker %s", quote(marker))
	}
	q.Set("marker", marker)
	cur.RawQuery = q.Encode()
	return cur.String(), nil
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

// Bounds of one list walk: a server that keeps answering "next" (a marker
// loop, or an endless collection) must not keep brick paging forever.
const (
	maxListPages = 10000
	maxListItems = 1000000
)

// pageGuard remembers the pages a walk asked for, so that a "next" link
// leading back to any earlier page (markers alternating A, B, A...) stops it.
type pageGuard struct {
	seen  map[string]bool
	pages int
}

// next checks the page just read and the link it gives to the next one.
func (g *pageGuard) next(page pagination.Page, items int) error {
	g.pages++
	if g.pages > maxListPages {
		return fmt.Errorf("more than %d pages; the server keeps sending next links", maxListPages)
	}
	if items > maxListItems {
		return fmt.Errorf("more than %d records; refusing to collect more", maxListItems)
	}
	next, err := page.NextPageURL()
	if err != nil || next == "" {
		return nil // the pager reports a bad link itself
	}
	if g.seen[next] {
		marker := "?"
		if u, err := url.Parse(next); err == nil {
			marker = u.Query().Get("marker")
		}
		return fmt.Errorf("pagination loop: next link goes back to marker %s after %d pages", quote(marker), g.pages)
	}
	g.seen[next] = true
	return nil
}

// collect walks a pager, converting errors, up to max records (0: all).
func collect[T any](ctx context.Context, pager pagination.Pager, c call, extract func(pagination.Page) ([]T, error), max int) ([]T, error) {
	var out []T
	guard := pageGuard{seen: map[string]bool{}}
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
		return true, guard.next(page, len(out))
	})
	if err != nil {
		return nil, convert(c, err)
	}
	return out, nil
}
