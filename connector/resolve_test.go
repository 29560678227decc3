package connector_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
)

type tableResolver map[string][]netip.Addr

func (r tableResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	if host == "hang" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	a, ok := r[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	return a, nil
}

func TestResolveHost(t *testing.T) {
	m := netip.MustParseAddr
	r := tableResolver{
		"two":   {m("::ffff:10.0.0.1"), m("fd00::1"), m("10.0.0.1")},
		"bad":   {m("0.0.0.0"), m("224.0.0.1"), m("255.255.255.255"), m("ff02::1")},
		"many":  {m("10.0.0.1"), m("10.0.0.2"), m("10.0.0.3"), m("10.0.0.4"), m("10.0.0.5"), m("10.0.0.6"), m("10.0.0.7"), m("10.0.0.8"), m("10.0.0.9")},
		"empty": {},
	}
	got, err := connector.ResolveHost(context.Background(), r, "two", time.Second)
	require.NoError(t, err)
	require.Equal(t, []netip.Addr{m("10.0.0.1"), m("fd00::1")}, got)
	got, err = connector.ResolveHost(context.Background(), r, "many", time.Second)
	require.NoError(t, err)
	require.Len(t, got, 8, "capped")
	for _, name := range []string{"bad", "empty", "missing"} {
		_, err := connector.ResolveHost(context.Background(), r, name, time.Second)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), `"`+name+`"`)
	}
	start := time.Now()
	_, err = connector.ResolveHost(context.Background(), r, "hang", 50*time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 10*time.Second, "bounded by the timeout, not the hang")
}

func TestHostName(t *testing.T) {
	for _, ok := range []string{"a", "san-a", "san-a.example.com", "san-a.example.com.", "x1.y2", "1a.example.com"} {
		require.True(t, connector.HostName(ok), ok)
	}
	for _, bad := range []string{"", ".", "-a", "a-", "a..b", "a_b", "1.2.3", "10.0.0.1", "a b", "a/b", "ä.example.com", string(make([]byte, 254))} {
		require.False(t, connector.HostName(bad), bad)
	}
}

func FuzzHostName(f *testing.F) {
	for _, s := range []string{"san-a.example.com", "1.2.3", "-x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !connector.HostName(s) {
			return
		}
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
				t.Fatalf("%q accepted with %q", s, r)
			}
		}
		if s[0] == '-' || s[0] == '.' || len(s) > 254 {
			t.Fatalf("%q accepted", s)
		}
	})
}
