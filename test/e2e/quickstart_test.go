//go:build e2e

package e2e

// The README's quickstart, run as written: its clouds.yaml entry filled in
// with the test Keystone's member user, its commands taken from README.md
// (so the test breaks when the README changes without it) and run in order
// in the shared guest against the test Cinder behind Keystone.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/internal/testbed/guest"
)

// quickstart is what the README's "Quickstart" section holds: the cloud
// name of its clouds.yaml example and its commands, in order.
type quickstart struct {
	cloud    string
	commands []string
}

// readQuickstart reads the README's Quickstart section: the first yaml
// block (clouds.yaml) and the "$ " lines of its console blocks.
func readQuickstart(readme string) (quickstart, error) {
	var q quickstart
	_, section, ok := strings.Cut(readme, "\n## Quickstart\n")
	if !ok {
		return q, fmt.Errorf("README.md has no \"## Quickstart\" section")
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var block, yamlText string
	sc := bufio.NewScanner(strings.NewReader(section))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			block = strings.TrimPrefix(line, "```")
		case block == "yaml" && q.cloud == "":
			yamlText += line + "\n"
		case block == "console" && strings.HasPrefix(line, "$ "):
			q.commands = append(q.commands, strings.TrimPrefix(line, "$ "))
		}
		if line == "```" && block == "" && yamlText != "" && q.cloud == "" {
			var doc struct {
				Clouds map[string]any `yaml:"clouds"`
			}
			if err := yaml.Unmarshal([]byte(yamlText), &doc); err != nil || len(doc.Clouds) != 1 {
				return q, fmt.Errorf("the quickstart's clouds.yaml does not name one cloud (%v):\n%s", err, yamlText)
			}
			for name := range doc.Clouds {
				q.cloud = name
			}
		}
	}
	if q.cloud == "" || len(q.commands) == 0 {
		return q, fmt.Errorf("the quickstart has no clouds.yaml block or no \"$ \" commands")
	}
	return q, nil
}

// quickstartScript runs each command in one shell (an export carries to
// the next), its output in /brick/qs-N.out, and after each says what is
// mounted on /srv/data.
func quickstartScript(commands []string) string {
	var b strings.Builder
	// The host as Debian's open-iscsi and multipath-tools packages leave
	// it (iscsid and multipathd running), brick where make build's copy goes.
	b.WriteString(`set -u
eval "$("$BRICK_FIXTURES/iscsi.sh")"
install -m 755 /brick/brick /usr/local/sbin/brick
unset OS_AUTH_TYPE OS_CLOUD BRICK_CINDER_ENDPOINT BRICK_IRONIC_ENDPOINT
install -d -m 700 /root/.config/openstack
install -m 600 /brick/clouds.yaml /root/.config/openstack/clouds.yaml
cd /root
`)
	for i, c := range commands {
		fmt.Fprintf(&b, "t=$(date +%%s%%N)\n%s >/brick/qs-%d.out 2>/brick/qs-%d.err\n", c, i, i)
		fmt.Fprintf(&b, "echo \"RC qs-%d $?\"\necho \"MS qs-%d $((($(date +%%s%%N) - t) / 1000000))\"\n", i, i)
		fmt.Fprintf(&b, "echo \"MOUNT qs-%d $(findmnt -n -o SOURCE /srv/data || echo none)\"\n", i)
	}
	// The guest is shared with the next test: leave it as it was.
	b.WriteString(`echo "SESSIONS end $(iscsiadm -m session 2>/dev/null | grep -c . || true)"
brick local-detach data >/dev/null 2>&1 || true
rm -rf /root/.config/openstack /usr/local/sbin/brick
rmdir /srv/data 2>/dev/null || true
echo DONE
`)
	return b.String()
}

// TestReadmeQuickstart runs in the suite's shared guest (no boot of its
// own), which it leaves clean.
func TestReadmeQuickstart(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart()
	start := time.Now()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	q, err := readQuickstart(string(readme))
	require.NoError(t, err)
	c := needCinder(t, guestCinderOptions)
	k := needKeystone(t, testbed.KeystoneOptions{})
	vol := newVolume(t, c.InProject(k.ProjectID), "data")
	guestAuthURL := strings.Replace(k.AuthURL, "127.0.0.1", testbed.GuestHostIP, 1)
	clouds := filepath.Join(t.TempDir(), "clouds.yaml")
	require.NoError(t, os.WriteFile(clouds, []byte(`clouds:
  `+q.cloud+`:
    auth:
      auth_url: `+guestAuthURL+`
      username: `+k.Member.Name+`
      password: `+k.Member.Password+`
      project_name: `+k.Project+`
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionGuest
`), 0o600))
	share := guestShare(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := runSmokeGuest(t, ctx, guest.Options{
		Script:   quickstartScript(q.commands),
		Files:    map[string]string{buildBrick(t): "brick", clouds: "clouds.yaml"},
		NICs:     1,
		Timeout:  5 * time.Minute,
		ShareDir: share,
	})
	require.NoError(t, err)
	t.Logf("guest: script %s, wall %s, exit %d\n%s", res.ScriptTime, res.Duration, res.ExitCode, res.Output)
	lines := scriptLines(res.Output)
	for i, cmd := range q.commands {
		out, _ := os.ReadFile(filepath.Join(share, fmt.Sprintf("qs-%d.out", i)))
		errOut, _ := os.ReadFile(filepath.Join(share, fmt.Sprintf("qs-%d.err", i)))
		t.Logf("$ %s\n%s%s", cmd, out, errOut)
		require.Equal(t, "0", lines[fmt.Sprintf("RC qs-%d", i)], "README quickstart command %q failed:\n%s%s", cmd, out, errOut)
		if strings.HasPrefix(cmd, "brick local-attach") {
			require.Contains(t, string(out), vol.ID, "local-attach names the volume")
			require.NotEqual(t, "none", lines[fmt.Sprintf("MOUNT qs-%d", i)], "local-attach --mountpoint mounted /srv/data")
		}
		if strings.HasPrefix(cmd, "brick list") {
			require.Contains(t, string(out), "/srv/data", "list shows the mount point")
		}
	}
	require.Equal(t, "none", lines[fmt.Sprintf("MOUNT qs-%d", len(q.commands)-1)], "the quickstart ends unmounted")
	require.Equal(t, "0", lines["SESSIONS end"], "the quickstart ends with no iSCSI session")
	require.Contains(t, string(res.Output), "\nDONE")
	t.Logf("TestReadmeQuickstart wall %s", time.Since(start).Round(time.Millisecond))
}
