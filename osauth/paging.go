package osauth

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/gophercloud/gophercloud/v2/pagination"

	"github.com/brick-storage/brick/ident"
)

// ErrNoMarker: a "next" link without a marker would fetch the same page
// forever.
var ErrNoMarker = errors.New("next link has no marker")

// NextPage is the one rule every brick pager follows for a server's "next"
// link: the next request goes to the page just fetched (cur: the
// endpoint's scheme, host, port and path, and the first request's query)
// with only the link's marker taken over. A link naming another origin
// (a Cinder behind a TLS proxy advertises http://internal:8776, a hostile
// one any host) thus never receives the token, and a link that drops a
// filter (Ironic's drops node=) cannot widen the list.
func NextPage(cur url.URL, next string) (string, error) {
	n, err := url.Parse(next)
	if err != nil {
		return "", fmt.Errorf("bad next link: %w", err)
	}
	marker := n.Query().Get("marker")
	if marker == "" {
		return "", ErrNoMarker
	}
	q := cur.Query()
	if q.Get("marker") == marker {
		return "", fmt.Errorf("next link repeats marker %s", strconv.Quote(ident.Clip(marker, 80)))
	}
	q.Set("marker", marker)
	cur.RawQuery = q.Encode()
	return cur.String(), nil
}

// Bounds of one list walk: a server that keeps answering "next" (a marker
// loop, or an endless collection) must not keep brick paging forever.
const (
	MaxListPages = 10000
	MaxListItems = 1000000
)

// PageGuard remembers the pages a walk asked for, so that a "next" link
// leading back to any earlier page (markers alternating A, B, A...) stops
// it, and bounds the walk. The zero value is ready.
type PageGuard struct {
	seen  map[string]bool
	pages int
}

// Next checks the page just read (items: records collected so far) and
// the link it gives to the next one.
func (g *PageGuard) Next(page pagination.Page, items int) error {
	g.pages++
	if g.pages > MaxListPages {
		return fmt.Errorf("more than %d pages; the server keeps sending next links", MaxListPages)
	}
	if items > MaxListItems {
		return fmt.Errorf("more than %d records; refusing to collect more", MaxListItems)
	}
	next, err := page.NextPageURL()
	if err != nil || next == "" {
		return nil // the pager reports a bad link itself
	}
	if g.seen == nil {
		g.seen = map[string]bool{}
	}
	if g.seen[next] {
		marker := "?"
		if u, err := url.Parse(next); err == nil {
			marker = u.Query().Get("marker")
		}
		return fmt.Errorf("pagination loop: next link goes back to marker %s after %d pages", strconv.Quote(marker), g.pages)
	}
	g.seen[next] = true
	return nil
}
