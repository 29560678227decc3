package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestModuleVersion(t *testing.T) {
	for in, want := range map[string]string{
		"":        "",
		"(devel)": "",
		"v1.2.0":  "1.2.0",
		"v0.0.0-20261203182853-039a40d09323+dirty": "0.0.0-20261203182853-039a40d09323+dirty",
	} {
		require.Equal(t, want, moduleVersion(in), in)
	}
}

// TestVersionFlag: a test binary carries no stamp, so both spellings say
// "dev" (make build stamps the git tag; the package's e2e test checks it).
func TestVersionFlag(t *testing.T) {
	out, errOut, code := runBrick(t, nil, "--version")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "brick version dev\n", out)
	out, _, code = runBrick(t, nil, "version", "-f", "value", "-c", "version")
	require.Equal(t, 0, code)
	require.Equal(t, "dev\n", out)
}
