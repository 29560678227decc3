package secret

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://user:pw@cinder.example:8776/v3?token=abc": "https://cinder.example:8776/v3",
		"http://127.0.0.1:1/":                              "http://127.0.0.1:1/",
		"http://[::1":                                      "<url>",
	} {
		require.Equal(t, want, RedactURL(raw), raw)
	}
}
