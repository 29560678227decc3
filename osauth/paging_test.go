package osauth

import (
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
