package cinderapi

import (
	"context"
	"encoding/json"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/brick-storage/brick/osauth"
)

// listPage is one page of a Cinder list ("volumes", "attachments").
type listPage struct {
	pagination.LinkedPageBase
	key string
}

// NextPageURL follows "<key>_links" by osauth.NextPage's rule: the next
// request stays on the endpoint's origin, path and query, and takes only
// the marker from Cinder's link, so a Cinder advertising another origin
// (behind a TLS proxy without public_endpoint, or hostile) never receives
// the token.
func (p listPage) NextPageURL() (string, error) {
	var body map[string]json.RawMessage
	if err := p.ExtractInto(&body); err != nil {
		return "", err
	}
	var links []gophercloud.Link
	if raw, ok := body[p.key+"_links"]; ok {
		if err := json.Unmarshal(raw, &links); err != nil {
			return "", err
		}
	}
	for _, l := range links {
		if l.Rel == "next" {
			return osauth.NextPage(p.URL, l.Href)
		}
	}
	return "", nil
}

// IsEmpty reports whether the page holds no records.
func (p listPage) IsEmpty() (bool, error) {
	if p.StatusCode == 204 {
		return true, nil
	}
	var items []json.RawMessage
	err := p.ExtractIntoSlicePtr(&items, p.key)
	return len(items) == 0, err
}

// walk lists <key>/detail with the query and hands each page's records to
// f, within osauth.PageGuard's bounds.
func walk[T any](ctx context.Context, sc *gophercloud.ServiceClient, key, query string, f func([]T)) error {
	pager := pagination.NewPager(sc, sc.ServiceURL(key, "detail")+query, func(r pagination.PageResult) pagination.Page {
		return listPage{LinkedPageBase: pagination.LinkedPageBase{PageResult: r}, key: key}
	})
	var guard osauth.PageGuard
	n := 0
	return pager.EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		var list []T
		if err := p.(listPage).ExtractIntoSlicePtr(&list, key); err != nil {
			return false, err
		}
		f(list)
		n += len(list)
		return true, guard.Next(p, n)
	})
}
