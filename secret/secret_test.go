package secret

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// holder is how secrets travel: inside option structs and records.
type holder struct {
	User     string
	Password Value
	Nested   struct{ Key Value }
	Ptr      *Value
}

// TestValueNeverFormats renders secrets every way a program prints
// things; none may show the secret, whatever it is: short, a common word,
// a piece of a flag name, or something that looks like a format verb.
func TestValueNeverFormats(t *testing.T) {
	render := func(v Value) map[string]string {
		h := holder{User: "u", Password: v, Ptr: &v}
		h.Nested.Key = v
		js, err := json.Marshal(h)
		require.NoError(t, err)
		ys, err := yaml.Marshal(h)
		require.NoError(t, err)
		var logged bytes.Buffer
		slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{ReplaceAttr: dropTime})).Info("auth", "password", v, "holder", h)
		var jlogged bytes.Buffer
		slog.New(slog.NewJSONHandler(&jlogged, &slog.HandlerOptions{ReplaceAttr: dropTime})).Info("auth", "password", v)
		return map[string]string{
			"%s": fmt.Sprintf("%s", v), "%v": fmt.Sprintf("%v", v), "%+v": fmt.Sprintf("%+v", h),
			"%#v": fmt.Sprintf("%#v", h), "%q": fmt.Sprintf("%q", v), "%x": fmt.Sprintf("%x", v),
			"%d": fmt.Sprintf("%d", v), "%10s": fmt.Sprintf("%10s", v), "Sprint": fmt.Sprint(v, h),
			"error": fmt.Errorf("login with %v: %w", v, errors.New("x")).Error(),
			"json":  string(js), "yaml": string(ys), "slog text": logged.String(), "slog json": jlogged.String(),
			"String": v.String(), "GoString": v.GoString(),
		}
	}
	// Every rendering of any secret equals that of another secret: the
	// output holds nothing of it, not even its length.
	want := render(New("a-different-secret-of-another-length"))
	for _, raw := range []string{"p", "password", "os", "-", "admin", "%s", "\x00", "s3cr3t-pa55w0rd-long-enough", "***x"} {
		v := New(raw)
		got := render(v)
		for how, out := range got {
			require.Equal(t, want[how], out, "%s of %q", how, raw)
			require.Contains(t, out, Mask, "%s of %q", how, raw)
		}
		require.Equal(t, raw, v.Reveal())
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

func TestValueBasics(t *testing.T) {
	var zero Value
	require.True(t, zero.IsZero())
	require.Equal(t, "", zero.Reveal())
	require.Equal(t, "", zero.String(), "an unset secret prints as unset")
	require.True(t, New("").IsZero())
	require.True(t, New("a").Equal(New("a")))
	require.False(t, New("a").Equal(New("b")))
	require.Equal(t, "b", zero.Or(New("b")).Reveal())
	require.Equal(t, "a", New("a").Or(New("b")).Reveal())
	js, err := json.Marshal(map[string]Value{"set": New("x"), "unset": zero})
	require.NoError(t, err)
	require.JSONEq(t, `{"set":"***","unset":""}`, string(js))
}
