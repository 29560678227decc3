package osauth

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testca"
)

// TestCloudsFileTrust: as root, clouds.yaml and secure.yaml that another
// user owns or can write are refused with the file and the fix named, not
// skipped; one holding a password that others can read draws a warning.
// Ownership by root is simulated by the trusted Owner, so this runs as any
// user.
func TestCloudsFileTrust(t *testing.T) {
	me := uint32(os.Geteuid())
	const entry = "clouds:\n  c:\n    auth_type: none\n    baremetal_endpoint_override: http://ironic:6385\n"
	const withPassword = "clouds:\n  c:\n    auth:\n      auth_url: http://ks/v3\n      password: pw\n"
	for _, tc := range []struct {
		name             string
		clouds, secure   string
		cloudsMode       os.FileMode
		secureMode       os.FileMode
		owner            uint32
		enforce          bool
		wantErr, wantLog string
	}{
		{"root's file", entry, "", 0o600, 0, me, true, "", ""},
		{"another user's file", entry, "", 0o600, 0, me + 1, true, "clouds.yaml is owned by uid", ""},
		{"writable by others", entry, "", 0o666, 0, me, true, "chmod go-w", ""},
		{"writable by group", entry, "", 0o620, 0, me, true, "writable by group or others", ""},
		{"password readable by others", withPassword, "", 0o644, 0, me, true, "", "clouds.yaml holds a password and every local user can read it"},
		{"readable, no password", entry, "", 0o644, 0, me, true, "", ""},
		{"secure.yaml writable by others", entry, withPassword, 0o600, 0o666, me, true, "secure.yaml is writable by group or others", ""},
		{"secure.yaml readable by others", entry, withPassword, 0o600, 0o644, me, true, "", "secure.yaml holds a password"},
		{"not root: unchanged", entry, "", 0o666, 0, me + 1, false, "", ""},
	} {
		dir := t.TempDir()
		file := filepath.Join(dir, "clouds.yaml")
		writeMode(t, file, tc.clouds, tc.cloudsMode)
		if tc.secure != "" {
			writeMode(t, filepath.Join(dir, "secure.yaml"), tc.secure, tc.secureMode)
		}
		var logs bytes.Buffer
		_, err := Resolve(Options{Cloud: "c", CloudsFiles: []string{file}, Log: slog.New(slog.NewTextHandler(&logs, nil)),
			Trust: &FileTrust{Enforce: tc.enforce, Owner: tc.owner}})
		if tc.wantErr == "" {
			require.NoError(t, err, tc.name)
		} else {
			require.ErrorIs(t, err, ErrUntrusted, tc.name)
			require.ErrorContains(t, err, tc.wantErr, tc.name)
			require.ErrorContains(t, err, dir, tc.name)
		}
		if tc.wantLog == "" {
			require.NotContains(t, logs.String(), "every local user", tc.name)
		} else {
			require.Contains(t, logs.String(), tc.wantLog, tc.name)
			require.Contains(t, logs.String(), dir, tc.name)
		}
	}
}

// TestCurrentDirCloudsRefused: ./clouds.yaml, found by the default search
// in the directory brick runs in, is refused when another user owns it.
func TestCurrentDirCloudsRefused(t *testing.T) {
	dir := t.TempDir()
	writeMode(t, filepath.Join(dir, "clouds.yaml"), "clouds:\n  c:\n    auth_type: none\n", 0o644)
	t.Chdir(dir)
	t.Setenv("OS_CLIENT_CONFIG_FILE", "")
	_, err := Resolve(Options{Cloud: "c", Trust: &FileTrust{Enforce: true, Owner: uint32(os.Geteuid()) + 1}})
	require.ErrorIs(t, err, ErrUntrusted)
	require.ErrorContains(t, err, filepath.Join(dir, "clouds.yaml"))
	require.ErrorContains(t, err, "chown root")
}

// TestCheckDir: a --host-root another user owns, that others can write, or
// that is another user's symlink, is refused as root.
func TestCheckDir(t *testing.T) {
	me := uint32(os.Geteuid())
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	open := t.TempDir()
	require.NoError(t, os.Chmod(open, 0o777))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(dir, link))
	ok := FileTrust{Enforce: true, Owner: me}
	require.NoError(t, ok.CheckDir(dir))
	require.NoError(t, ok.CheckDir(link))
	require.ErrorContains(t, ok.CheckDir(open), "writable by group or others")
	other := FileTrust{Enforce: true, Owner: me + 1}
	require.ErrorContains(t, other.CheckDir(dir), "is owned by uid")
	require.ErrorContains(t, other.CheckDir(link), "symlink "+link+" is owned by uid")
	require.NoError(t, FileTrust{}.CheckDir(open))
}

func writeMode(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), mode))
	require.NoError(t, os.Chmod(path, mode))
}

// TestCACertTrust: the CA bundle a trusted clouds.yaml names decides who
// receives the password, so it passes the same trust rule: as root, a
// bundle another user owns or can write is refused.
func TestCACertTrust(t *testing.T) {
	me := uint32(os.Geteuid())
	ca := testca.New(t, "brick-test-ca")
	pemData, err := os.ReadFile(ca.PEMFile)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		mode    os.FileMode
		owner   uint32 // the bundle's owner; the trusted owner is me
		wantErr string
	}{
		{"root's bundle", 0o644, me, ""},
		{"writable by others", 0o666, me, "is writable by group or others"},
		{"another user's bundle", 0o644, me + 1, "is owned by uid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bundle := filepath.Join(dir, "ca.pem")
			writeMode(t, bundle, string(pemData), tc.mode)
			if tc.owner != me {
				if me != 0 {
					t.Skip("chown needs root")
				}
				require.NoError(t, os.Chown(bundle, int(tc.owner), -1))
			}
			clouds := filepath.Join(dir, "clouds.yaml")
			writeMode(t, clouds, "clouds:\n  c:\n    auth_type: none\n    block_storage_endpoint_override: https://127.0.0.1:1/v3\n    cacert: "+bundle+"\n", 0o600)
			_, err := BlockStorageClient(t.Context(), Options{Cloud: "c", CloudsFiles: []string{clouds},
				Trust: &FileTrust{Enforce: true, Owner: me}})
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUntrusted)
			require.ErrorIs(t, err, ErrConfig)
			require.ErrorContains(t, err, "read CA bundle: untrusted configuration: file "+bundle+" "+tc.wantErr)
		})
	}
}
