package testbed

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests need no service: they cover the parts of the package that run
// before and after the scripts. The services themselves are exercised by
// test/e2e (go test -tags e2e ./test/e2e/).

func TestParseEnv(t *testing.T) {
	env, err := parseEnv([]byte("# comment\n\nBRICK_CINDER_ENDPOINT=http://127.0.0.1:8776/v3\nBRICK_TB_SECONDARY_IPS=\nX=a=b\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"BRICK_CINDER_ENDPOINT":  "http://127.0.0.1:8776/v3",
		"BRICK_TB_SECONDARY_IPS": "",
		"X":                      "a=b",
	}, env)

	_, err = parseEnv([]byte("just words\n"))
	require.ErrorContains(t, err, "line 1")
}

func TestMergeEnvOverridesInherited(t *testing.T) {
	got := mergeEnv([]string{"PATH=/bin", "BRICK_TB_CHAP=0"}, map[string]string{"BRICK_TB_CHAP": "1"})
	assert.ElementsMatch(t, []string{"PATH=/bin", "BRICK_TB_CHAP=1"}, got)
}

func TestFindModuleRoot(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module github.com/brick-storage/brick\n\ngo 1.26\n"), 0o644))
	sub := filepath.Join(dir, "internal", "testbed")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	// A nested module with another path must be walked past.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "internal", "go.mod"), []byte("module example.com/other\n"), 0o644))

	got, err := findModuleRoot(sub)
	require.NoError(t, err)
	assert.Equal(t, dir, got)

	_, err = findModuleRoot(t.TempDir())
	require.Error(t, err)
}

func TestRepoRootHasScripts(t *testing.T) {
	root, err := RepoRoot()
	require.NoError(t, err)
	for _, s := range []string{"test/cinder/up.sh", "test/cinder/down.sh", "test/ironic/up.sh", "test/ironic/down.sh"} {
		fi, err := os.Stat(filepath.Join(root, s))
		require.NoError(t, err, s)
		assert.NotZero(t, fi.Mode()&0o100, "%s must be executable", s)
	}
}

func TestCinderOptionsEnv(t *testing.T) {
	t.Setenv("BRICK_TB_CINDER_STATE", "")
	t.Setenv("BRICK_TB_CINDER_PORT", "")
	t.Setenv("BRICK_TB_TARGET_IP", "192.0.2.1") // ignored: the options decide
	env := CinderOptions{}.env()
	assert.Equal(t, "127.0.0.1", env["BRICK_TB_TARGET_IP"])
	assert.Equal(t, "", env["BRICK_TB_SECONDARY_IPS"])
	assert.Equal(t, "1", env["BRICK_TB_CHAP"], "CHAP is on by default")
	assert.Equal(t, "8776", env["BRICK_TB_CINDER_PORT"])
	assert.Equal(t, DefaultCinderStateDir, env["BRICK_TB_CINDER_STATE"])
	assert.Equal(t, DefaultProjectID, env["BRICK_TB_PROJECT_ID"])

	env = CinderOptions{TargetIP: GuestHostIP, SecondaryIPs: []string{GuestHostIP2, "10.0.4.2"}, NoCHAP: true}.env()
	assert.Equal(t, "10.0.2.2", env["BRICK_TB_TARGET_IP"])
	assert.Equal(t, "10.0.3.2,10.0.4.2", env["BRICK_TB_SECONDARY_IPS"])
	assert.Equal(t, "0", env["BRICK_TB_CHAP"])

	assert.True(t, CinderOptions{}.equal(CinderOptions{TargetIP: "127.0.0.1", Port: 8776}))
	assert.False(t, CinderOptions{}.equal(CinderOptions{SecondaryIPs: []string{"10.0.3.2"}}))
	assert.False(t, CinderOptions{}.equal(CinderOptions{NoCHAP: true}))
}

func TestIronicOptionsEnv(t *testing.T) {
	t.Setenv("BRICK_TB_IRONIC_STATE", "")
	t.Setenv("BRICK_TB_IRONIC_PORT", "")
	env := IronicOptions{}.env()
	assert.Equal(t, "6385", env["BRICK_TB_IRONIC_PORT"])
	assert.Equal(t, DefaultIronicStateDir, env["BRICK_TB_IRONIC_STATE"])

	// Where a service lives may come from the environment.
	t.Setenv("BRICK_TB_IRONIC_STATE", "/var/tmp/brick-testbed/ironic-ci")
	t.Setenv("BRICK_TB_IRONIC_PORT", "6395")
	env = IronicOptions{}.env()
	assert.Equal(t, "6395", env["BRICK_TB_IRONIC_PORT"])
	assert.Equal(t, "/var/tmp/brick-testbed/ironic-ci", env["BRICK_TB_IRONIC_STATE"])
	assert.Equal(t, "1000", env["BRICK_TB_IRONIC_MAX_LIMIT"])
	assert.Equal(t, "3", IronicOptions{MaxLimit: 3}.env()["BRICK_TB_IRONIC_MAX_LIMIT"])
}

func TestBackingFileAndIQN(t *testing.T) {
	c := &Cinder{VolumesDir: "/var/tmp/brick-testbed/cinder/volumes"}
	assert.Equal(t, "/var/tmp/brick-testbed/cinder/volumes/volume-abc", c.BackingFile("abc"))
	assert.Equal(t, "iqn.2010-10.org.openstack:volume-abc", c.TargetIQN("abc"))
}

func TestCinderRequestHeadersAndErrors(t *testing.T) {
	var seen http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		switch r.URL.Path {
		case "/v3/p1/volumes/v1":
			_ = json.NewEncoder(w).Encode(map[string]any{"volume": map[string]any{"id": "v1", "status": "available", "size": 1}})
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"itemNotFound": {"code": 404}}`))
		}
	}))
	defer srv.Close()
	c := &Cinder{Endpoint: srv.URL + "/v3", ProjectID: "p1", Token: "brick:p1"}
	ctx := context.Background()

	v, err := c.GetVolume(ctx, "v1")
	require.NoError(t, err)
	assert.Equal(t, "available", v.Status)
	assert.Equal(t, "brick:p1", seen.Get("X-Auth-Token"))
	assert.Empty(t, seen.Get("OpenStack-API-Version"))

	err = c.Request(ctx, http.MethodGet, "/volumes/v2", "3.44", nil, nil)
	assert.Equal(t, "volume 3.44", seen.Get("OpenStack-API-Version"))
	assert.Equal(t, http.StatusNotFound, StatusOf(err))
	assert.ErrorContains(t, err, "itemNotFound")

	// A delete of a missing volume is success.
	require.NoError(t, c.DeleteVolume(ctx, "v2"))
}

func TestWaitVolumeStopsOnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"volume": map[string]any{"id": "v1", "status": "error"}})
	}))
	defer srv.Close()
	c := &Cinder{Endpoint: srv.URL + "/v3", ProjectID: "p"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.WaitVolume(ctx, "v1", "available")
	require.ErrorContains(t, err, `is "error"`)
}

func TestIronicRequestMicroversion(t *testing.T) {
	var seen http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		_ = json.NewEncoder(w).Encode(map[string]any{"uuid": "n1", "driver": "fake-hardware"})
	}))
	defer srv.Close()
	i := &Ironic{Endpoint: srv.URL}
	n, err := i.CreateNode(context.Background(), "node-a")
	require.NoError(t, err)
	assert.Equal(t, "n1", n.UUID)
	assert.Equal(t, "1.32", seen.Get("X-OpenStack-Ironic-API-Version"))
}

func TestRunScriptReportsStderr(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module github.com/brick-storage/brick\n"), 0o644))
	script := filepath.Join(dir, "fail.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho out\necho \"why: $BRICK_TB_X\" >&2\nexit 3\n"), 0o755))
	// Point RepoRoot at the temp dir for this test only.
	saved, _ := RepoRoot() // settles rootOnce first
	rootDir = dir
	defer func() { rootDir = saved }()

	out, err := runScript(context.Background(), "fail.sh", map[string]string{"BRICK_TB_X": "told"})
	assert.Equal(t, "out\n", out)
	require.ErrorContains(t, err, "why: told")
	require.ErrorContains(t, err, "exit status 3")
}
