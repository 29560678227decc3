package apierr_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ident"
)

func TestErrorLine(t *testing.T) {
	cause := gophercloud.ErrUnexpectedResponseCode{Actual: 409}
	for _, tc := range []struct {
		name string
		err  *apierr.Error
		want string
	}{
		{"all parts", &apierr.Error{Service: "cinder", Op: "reserve", Volume: "v1", Status: 409, Message: "Invalid volume",
			Hint: "detach it first", Kind: apierr.ErrInvalidState, Err: cause},
			"cinder reserve volume v1: Invalid volume (HTTP 409); detach it first"},
		{"kind stands in", &apierr.Error{Service: "cinder", Op: "get", Status: 503, Kind: apierr.ErrUnreachable},
			"cinder get: unreachable (HTTP 503)"},
		{"op only", &apierr.Error{Op: "authenticate at http://k", Message: "wrong password", Kind: apierr.ErrUnauthorized},
			"authenticate at http://k: wrong password"},
		{"message only", &apierr.Error{Message: "the catalog has no endpoint", Kind: apierr.ErrNoEndpoint},
			"the catalog has no endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.err.Error())
			if tc.err.Kind != nil {
				require.ErrorIs(t, tc.err, tc.err.Kind)
				require.True(t, apierr.IsKind(fmt.Errorf("wrapped: %w", tc.err), tc.err.Kind))
			}
		})
	}
	var code gophercloud.ErrUnexpectedResponseCode
	e := &apierr.Error{Kind: apierr.ErrConflict, Err: cause}
	require.ErrorAs(t, e, &code)
	require.Equal(t, 409, code.Actual)
	require.False(t, apierr.IsKind(e, apierr.ErrNotFound))
	require.False(t, apierr.IsKind(errors.New("x"), apierr.ErrConflict))
	require.Empty(t, (&apierr.Error{}).Unwrap())
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"Invalid volume: in-use.\nTraceback (most recent call last):\n  File x", 100, "Invalid volume: in-use."},
		{"first\x1b[31m line\nsecond", 100, "first[31m line"},
		{"Traceback (most recent call last):\n  File x", 100, ""},
		{"  ", 100, ""},
		{strings.Repeat("é", 200), 11, strings.Repeat("é", 5) + "..."},
	} {
		require.Equal(t, tc.want, apierr.Message(tc.in, tc.n))
	}
}

func TestPage(t *testing.T) {
	for _, tc := range []struct {
		name, body, title, text string
		ok                      bool
	}{
		{"title", "<!DOCTYPE html><html><head><TITLE>502 Bad &amp; Gateway</TITLE></head></html>", "502 Bad & Gateway", "", true},
		{"title attributes", `<title lang="en">
  Service
  Unavailable </title>`, "Service Unavailable", "", true},
		{"no title", "<html><body><h1>Oops</h1>\n<p>down</p></body></html>", "", "Oops down", true},
		{"empty title", "<html><title> </title><body>gone</body></html>", "", "gone", true},
		{"json", `{"error": {"message": "x"}}`, "", "", false},
		{"text", "Bad Gateway", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			title, text, ok := apierr.Page([]byte(tc.body), 100)
			require.Equal(t, tc.title, title)
			require.Equal(t, tc.text, text)
			require.Equal(t, tc.ok, ok)
		})
	}
}

// FuzzSummary: whatever a server sends, the summary is one line of valid
// UTF-8 without control characters, within its bound.
func FuzzSummary(f *testing.F) {
	for _, s := range []string{"<html><title>x</title></html>", "<html>\x1b[2J<b>a</b>", "msg\nTraceback (most recent call last)", "\xff<TITLE>\xfe</title>", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		title, text, _ := apierr.Page([]byte(s), 40)
		for _, out := range []string{apierr.Message(s, 40), title, text} {
			require.True(t, utf8.ValidString(out), "%q", out)
			require.LessOrEqual(t, len(out), 43, "%q", out)
			require.Equal(t, -1, strings.IndexFunc(out, ident.IsControl), "%q", out)
			require.NotContains(t, out, "Traceback (most recent call last)")
		}
	})
}
