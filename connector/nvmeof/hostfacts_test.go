package nvmeof

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host/hosttest"
)

// TestHostFacts: get-connector's NVMe keys come from the reader every
// connect uses, through the registry's Gather.
func TestHostFacts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		files  map[string]string
		nqn    string
		id     string
		native bool
		warns  []string
	}{
		{"nvme-cli's files, native multipath", map[string]string{
			hostNQNFile:       "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0051-3510-8052-b4c04f4b4e32\n",
			hostIDFile:        "4C4C4544-0051-3510-8052-B4C04F4B4E32\n",
			nvmeMultipathFile: "Y\n"}, "nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0051-3510-8052-b4c04f4b4e32", "4c4c4544-0051-3510-8052-b4c04f4b4e32", true, nil},
		{"no files: keys left out, multipath false", nil, "", "", false, nil},
		{"bad files warn", map[string]string{hostNQNFile: "nqn.x,hostid=1\n", hostIDFile: "nope\n", nvmeMultipathFile: "N\n"},
			"", "", false, []string{hostNQNFile, hostIDFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, root := hosttest.New(t, hosttest.NewRunner(nil))
			for f, c := range tc.files {
				hosttest.WriteFile(t, root, f, c)
			}
			reg := connector.NewRegistry()
			reg.Register(New(h, Options{}), Protocol)
			p, warns, err := reg.Gather(h.FS, connector.GatherOptions{IP: "192.0.2.1", Hostname: "h"})
			require.NoError(t, err)
			require.Equal(t, tc.nqn, p.NQN)
			require.Equal(t, tc.id, p.NVMeHostID)
			require.NotNil(t, p.NVMeNativeMultipath)
			require.Equal(t, tc.native, *p.NVMeNativeMultipath)
			var files []string
			for _, w := range warns {
				files = append(files, w.File)
			}
			require.Equal(t, tc.warns, files)
		})
	}
}
