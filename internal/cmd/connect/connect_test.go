package connect

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/cmd/factory/factorytest"
)

// A wrong --connection-info file is named, with what is wrong with it and
// what was expected; no key the user did not write is blamed.
func TestConnectionInfoFileErrors(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	const want = "; expected " + connInfoShape
	for _, tc := range []struct {
		name, file, stdin, msg string
	}{
		{"missing", filepath.Join(dir, "nosuch.json"), "", "--connection-info " + dir + "/nosuch.json: no such file"},
		{"directory", dir, "", "--connection-info " + dir + ": is a directory; give the file holding " + connInfoShape},
		{"empty", file("empty.json", " \n"), "", "--connection-info " + dir + "/empty.json: it is empty" + want},
		{"array", file("array.json", `[{"driver_volume_type": "iscsi"}]`), "", "--connection-info " + dir + "/array.json: it holds a JSON array" + want},
		{"null", file("null.json", "null"), "", "--connection-info " + dir + "/null.json: it holds JSON null" + want},
		{"string", file("string.json", `"iscsi"`), "", "--connection-info " + dir + "/string.json: it holds a JSON string" + want},
		{"number", file("number.json", `3260`), "", "--connection-info " + dir + "/number.json: it holds a JSON number or boolean" + want},
		{"truncated", file("trunc.json", `{"driver_volume_type": "iscsi", "data": {`), "", "--connection-info " + dir + "/trunc.json: its JSON ends early (truncated?)" + want},
		{"not JSON", file("yaml.json", "driver_volume_type: iscsi\n"), "", "--connection-info " + dir + "/yaml.json: it is not JSON (invalid character 'd' looking for beginning of value, at byte 1)" + want},
		{"two documents", file("two.json", `{} {}`), "", "--connection-info " + dir + "/two.json: it has more after the first JSON value (at byte 2)" + want},
		{"too large", file("big.json", `{"x": "`+strings.Repeat("A", 2048)+`"}`), "", "--connection-info " + dir + "/big.json: larger than 1024 bytes; expected " + connInfoShape + " (usually under 4 KiB): is it the right file?"},
		{"stdin truncated", "-", `{"data": [`, "--connection-info - (stdin): its JSON ends early (truncated?)" + want},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readJSONObjectInput(strings.NewReader(tc.stdin), "--connection-info", tc.file, 1024, connInfoShape)
			require.EqualError(t, err, tc.msg)
			require.NotContains(t, err.Error(), `key "`)
		})
	}
	raw, err := readJSONObjectInput(nil, "--connection-info", file("ok.json", `{"driver_volume_type": "iscsi", "data": {}}`+"\n"), 1024, connInfoShape)
	require.NoError(t, err)
	require.Contains(t, string(raw), "iscsi")
}

func TestFileProblem(t *testing.T) {
	require.Equal(t, "permission denied", fileProblem(&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrPermission}))
	require.Equal(t, "no such file", fileProblem(&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}))
	require.Equal(t, "input/output error", fileProblem(&fs.PathError{Op: "read", Path: "/x", Err: errIO{}}))
}

type errIO struct{}

func (errIO) Error() string { return "input/output error" }

func TestNewCmd(t *testing.T) {
	f := factorytest.New(t.TempDir())
	o, err := factorytest.Parse(t, f, NewCmdConnect, "--connection-info", "-", "--dry-run", "--multipath", "--iscsi-login-timeout", "3s")
	require.NoError(t, err)
	require.Equal(t, "-", o.connectionInfo)
	require.True(t, o.dryRun)
	require.True(t, o.opts.Multipath)
	require.Equal(t, 3*time.Second, o.opts.ISCSI.LoginTimeout)
	d, err := factorytest.Parse(t, f, NewCmdDisconnect, "--connection-info", "c.json", "--device-info", "{}", "--force")
	require.NoError(t, err)
	require.Equal(t, "{}", d.DeviceInfo)
	require.True(t, d.Force)
}
