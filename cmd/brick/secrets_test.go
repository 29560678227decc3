package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi/cindertest"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/host/hosttest"
)

// Secrets the test plants; none may appear anywhere brick writes.
const (
	secCHAP      = "chap-SECRET-pw"  // cindertest's CHAP password
	secCHAPOwn   = "own-CHAP-s3cret" // hand-made connection info
	secDiscovery = "disc-CHAP-s3cret"
	secCephKey   = "AQAAAAAAAAAAABAAyWOxrO/00vSiTjJRxjetgA=="
	secPassword  = "keystone-PW-s3cret"
	secToken     = "gAAAAA-token-s3cret"
)

var allSecrets = []string{secCHAP, secCHAPOwn, secDiscovery, secCephKey, secPassword, secToken}

// fakeTools plays iscsiadm and rbd over the fixture tree: records are
// created and deleted as open-iscsi does, every login is refused, every map
// fails, and both tools echo the secrets they were given on stderr (as a
// careless tool might) so brick's masking is what keeps them out.
type fakeTools struct {
	t    *testing.T
	root string
	mu   sync.Mutex
	cmds []host.Command
	// echo are the secrets of the current invocation, which the tools
	// repeat on stderr.
	echo []string
}

func (f *fakeTools) run(_ context.Context, cmd host.Command) (host.Result, error) {
	f.mu.Lock()
	f.cmds = append(f.cmds, cmd)
	f.mu.Unlock()
	arg := func(flag string) string {
		for i, a := range cmd.Args {
			if a == flag {
				return hosttest.Arg(f.t, cmd, i+1)
			}
		}
		return ""
	}
	args := strings.Join(cmd.Args, " ")
	f.mu.Lock()
	leak := "debug: " + strings.Join(f.echo, " ")
	f.mu.Unlock()
	switch cmd.Name {
	case "iscsiadm":
		portal := strings.Replace(arg("-p"), ":", ",", 1)
		switch {
		case strings.HasPrefix(args, "-m node") && strings.HasSuffix(args, "-o new"):
			hosttest.WriteFile(f.t, f.root, "/etc/iscsi/nodes/"+arg("-T")+"/"+portal, "node.name = "+arg("-T")+"\nnode.session.auth.authmethod = None\n")
		case strings.HasPrefix(args, "-m node") && strings.HasSuffix(args, "-o delete"):
			_ = os.RemoveAll(filepath.Join(f.root, "/etc/iscsi/nodes/"+arg("-T")))
		case strings.HasPrefix(args, "-m discoverydb") && strings.HasSuffix(args, "-o new"):
			hosttest.WriteFile(f.t, f.root, "/etc/iscsi/send_targets/"+portal+"/st_config", "discovery.sendtargets.auth.authmethod = None\n")
		case strings.HasPrefix(args, "-m discoverydb") && strings.HasSuffix(args, "-o delete"):
			_ = os.RemoveAll(filepath.Join(f.root, "/etc/iscsi/send_targets/"+portal))
		case strings.Contains(args, "--discover"):
			return host.Result{Stdout: []byte("10.0.0.1:3260,1 iqn.2026-12.org.brick:t1\n10.0.0.2:3260,1 iqn.2026-12.org.brick:t1\n")}, nil
		case strings.HasSuffix(args, "--login"):
			return host.Result{}, hosttest.Fail(cmd, 24, "iscsiadm: Login failed, "+leak)
		case strings.HasSuffix(args, "--logout"):
			return host.Result{}, hosttest.Fail(cmd, 21, "iscsiadm: No matching sessions found")
		}
		return host.Result{}, nil
	case "rbd":
		if strings.Contains(args, "list") {
			return host.Result{Stdout: []byte("[]")}, nil
		}
		return host.Result{}, hosttest.Fail(cmd, 1, "rbd: map failed: "+leak)
	}
	return host.Result{}, nil
}

// runCaptured runs the CLI in-process with the fake tools.
func runCaptured(t *testing.T, f *fakeTools, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	a.runner = hosttest.NewRunner(f.run)
	code := runApp(context.Background(), a, args)
	return code, "STDOUT:\n" + out.String() + "\nSTDERR:\n" + errb.String()
}

// TestSecretsNeverLeak runs connect (iSCSI with CHAP and discovery CHAP,
// RBD with a cephx keyring), local-attach against the fake Cinder (CHAP)
// and Keystone password/token auth, all with --debug and all failing after
// the secrets were in hand, then searches stdout, stderr, every argv and
// environment given to a child, and every file left under the fixture root
// and TMPDIR for each secret: the count must be 0.
func TestSecretsNeverLeak(t *testing.T) {
	t.Setenv("BRICK_CONFIG", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	root := fixtureHost(t)
	f := &fakeTools{t: t, root: root}
	fake := cindertest.New(t)
	const vol = "11111111-1111-4111-8111-111111111111"
	fake.AddVolume(vol, "data")

	iscsiInfo := map[string]any{"driver_volume_type": "iscsi", "data": map[string]any{
		"target_portal": "10.0.0.1:3260", "target_iqn": "iqn.2026-12.org.brick:t1", "target_lun": 1,
		"auth_method": "CHAP", "auth_username": "u", "auth_password": secCHAPOwn,
		"discovery_auth_method": "CHAP", "discovery_auth_username": "d", "discovery_auth_password": secDiscovery,
	}}
	rbdInfo := map[string]any{"driver_volume_type": "rbd", "data": map[string]any{
		"name": "volumes/volume-" + vol, "hosts": []any{"10.0.0.1"}, "ports": []any{"6789"},
		"auth_enabled": true, "auth_username": "cinder", "keyring": "[client.cinder]\n\tkey = " + secCephKey + "\n",
	}}
	writeJSON := func(name string, v any) string {
		p := filepath.Join(t.TempDir(), name)
		b, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
	iscsiFile, rbdFile := writeJSON("iscsi.json", iscsiInfo), writeJSON("rbd.json", rbdInfo)
	base := []string{"--host-root", root, "--config", "/dev/null", "--debug"}
	cinder := append(append([]string{}, base...), "--os-auth-type", "noauth", "--cinder-endpoint", fake.Endpoint())

	var captured []string
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // proves the step that handles the secret ran
		echo []string
	}{
		{"connect iscsi", append(append([]string{}, base...), "connect", "--connection-info", iscsiFile, "--multipath"), 1, "CHAP", []string{secCHAPOwn, secDiscovery}},
		{"connect rbd", append(append([]string{}, base...), "connect", "--connection-info", rbdFile), 1, "rbd", []string{secCephKey}},
		{"local-attach chap", append(append([]string{}, cinder...), "local-attach", "data", "-f", "json"), 1, "local-attach data", []string{secCHAP}},
		{"local-attach v3.0 chap", append(append([]string{}, cinder...), "local-attach", "data", "--os-volume-api-version", "3.0"), 1, "local-attach data", []string{secCHAP}},
		{"list", append(append([]string{}, cinder...), "list", "-f", "json"), 0, "", nil},
		{"keystone password", append(append([]string{}, base...), "--os-auth-url", "http://127.0.0.1:1/v3", "--os-username", "u", "--os-password", secPassword,
			"--os-project-name", "p", "--os-user-domain-name", "Default", "--os-project-domain-name", "Default", "local-attach", "data"), 1, "local-attach data", nil},
		{"keystone token", append(append([]string{}, base...), "--os-auth-type", "token", "--os-auth-url", "http://127.0.0.1:1/v3", "--os-token", secToken,
			"--os-project-name", "p", "--os-project-domain-name", "Default", "local-attach", "data"), 1, "local-attach data", nil},
	} {
		f.mu.Lock()
		f.echo = tc.echo
		f.mu.Unlock()
		code, out := runCaptured(t, f, tc.args...)
		t.Logf("%s: exit %d\n%s", tc.name, code, out)
		require.Equal(t, tc.code, code, tc.name)
		require.Contains(t, out, tc.want, tc.name)
		captured = append(captured, out)
	}
	// The volume went back to available: the failing attaches rolled back.
	st, n := fake.Status(vol)
	require.Equal(t, "available", st)
	require.Zero(t, n)

	f.mu.Lock()
	for _, c := range f.cmds {
		captured = append(captured, strings.Join(c.Argv(), " "), strings.Join(c.Env, " "))
	}
	ncmds := len(f.cmds)
	f.mu.Unlock()
	require.NotZero(t, ncmds)
	var files int
	for _, dir := range []string{root, tmp} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			captured = append(captured, p+"\n"+string(b))
			return nil
		}))
	}
	found := 0
	for _, s := range allSecrets {
		for _, c := range captured {
			if strings.Contains(c, s) {
				found++
				t.Errorf("secret %q found in:\n%s", s, c)
			}
		}
	}
	t.Logf("secrets: %d secrets x %d outputs/argvs/files searched (%d commands, %d files): %d found", len(allSecrets), len(captured), ncmds, files, found)
	require.Zero(t, found)
}
