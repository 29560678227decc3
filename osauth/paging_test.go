package osauth

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNextPageStaysHome: whatever origin, path or filters a next link
// names, the next request goes to the current page's origin and path with
// its query, only the marker taken over.
func TestNextPageStaysHome(t *testing.T) {
	cur, err := url.Parse("https://cinder.example:8776/v3/p/volumes/detail?name=data")
	require.NoError(t, err)
	const want = "https://cinder.example:8776/v3/p/volumes/detail?marker=m1&name=data"
	for _, next := range []string{
		"http://internal:8776/v3/p/volumes/detail?marker=m1&name=data",
		"https://cinder.example:9999/v3/p/volumes/detail?marker=m1",
		"https://sink.example/steal?marker=m1&all_tenants=1",
		"/relative?marker=m1",
		"https://user:pw@cinder.example:8776/other?marker=m1",
	} {
		got, err := NextPage(*cur, next)
		require.NoError(t, err, next)
		require.Equal(t, want, got, next)
	}
	_, err = NextPage(*cur, "https://cinder.example:8776/v3/p/volumes/detail?name=data")
	require.ErrorIs(t, err, ErrNoMarker)
	again, _ := url.Parse(want)
	_, err = NextPage(*again, "http://x/?marker=m1")
	require.ErrorContains(t, err, `next link repeats marker "m1"`)
	_, err = NextPage(*cur, "http://[::1")
	require.ErrorContains(t, err, "bad next link")
}

func FuzzNextPage(f *testing.F) {
	f.Add("http://internal:8776/v3/p/volumes/detail?marker=m1&name=data")
	f.Add("//evil/?marker=%00")
	f.Fuzz(func(t *testing.T, next string) {
		cur, _ := url.Parse("https://cinder.example:8776/v3/p/attachments/detail?volume_id=v")
		got, err := NextPage(*cur, next)
		if err != nil {
			return
		}
		u, err := url.Parse(got)
		require.NoError(t, err)
		require.Equal(t, "https", u.Scheme)
		require.Equal(t, "cinder.example:8776", u.Host)
		require.Equal(t, "/v3/p/attachments/detail", u.Path)
		require.Equal(t, "v", u.Query().Get("volume_id"))
		require.Nil(t, u.User)
	})
}

// linkPage is a page whose "next" link is next.
type linkPage struct{ next string }

func (p linkPage) NextPageURL() (string, error) { return p.next, nil }
func (p linkPage) IsEmpty() (bool, error)       { return false, nil }
func (p linkPage) GetBody() any                 { return nil }

// TestPageGuard: a walk stops at the first next link back to a page it
// asked for, after MaxListPages pages of endless distinct links, and past
// MaxListItems records; a last page (no next link) ends it quietly. No
// server is needed: the guard sees only the pages' links.
func TestPageGuard(t *testing.T) {
	link := func(i int) string { return fmt.Sprintf("http://x/v1/list?marker=m%d", i) }
	for _, tc := range []struct {
		name  string
		next  func(i int) string // link of the ith page read
		items int                // records per page
		pages int                // pages read when the guard stops the walk
		want  string
	}{
		{"alternating markers", func(i int) string { return link(i % 2) }, 1, 3, `pagination loop: next link goes back to marker "m1" after 3 pages`},
		{"a page linking to itself", func(int) string { return link(7) }, 1, 2, `pagination loop: next link goes back to marker "m7" after 2 pages`},
		{"endless distinct markers", link, 1, MaxListPages + 1, "more than 10000 pages; the server keeps sending next links"},
		{"endless records", link, MaxListItems / 10, 11, "more than 1000000 records; refusing to collect more"},
		{"a last page", func(int) string { return "" }, 1, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g PageGuard
			for i := 1; i <= MaxListPages+2; i++ {
				p := linkPage{tc.next(i)}
				if err := g.Next(p, i*tc.items); err != nil {
					require.EqualError(t, err, tc.want)
					require.Equal(t, tc.pages, i, "pages read when stopped")
					return
				}
				if p.next == "" {
					break // the pager itself stops here
				}
			}
			require.Empty(t, tc.want, "the walk was never stopped")
		})
	}
}
