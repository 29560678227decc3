//go:build e2e

package e2e

// TestCSI proves brick csi (issue 37) on a real kernel against the real
// test bed Cinder, in the suite's shared guest (iscsid, multipathd, udev;
// the host's tgtd reached over both slirp NICs, so every volume has two
// paths and a dm-multipath map):
//
//   - a kubelet-shaped run (test/e2e/csikubelet: the controller and the
//     node plugin as two processes, the calls the sidecars and kubelet
//     make, in their order): provision, publish, stage, two pods, write,
//     full teardown, stage again with a kill -9 of the node plugin before
//     the publish (the data is there), online expand (df grows),
//     snapshot and a volume from it, bad requests (their codes; Cinder and the node
//     unchanged), NodeStage+NodePublish against brick local-attach of the
//     same volume, an encrypted volume type (LUKS, the fixed key), delete;
//   - csi-sanity (github.com/kubernetes-csi/csi-test, built once by
//     test/csi/install-sanity.sh) in full against brick csi --mode all
//     with the mount access type, expansion and snapshots on;
//     BRICK_E2E_CSI_SANITY_ACCESS="mount block" adds a whole run with the
//     block access type (4 more minutes: each node spec costs an iSCSI
//     multipath attach, 15-25 s under TCG).
//
// Run: test/e2e.sh -run '^TestCSI$'

import (
	"context"
	"encoding/xml"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
)

const csiGuestScript = reliabilityPrelude + `
{ set +x; } 2>/dev/null
umask 077
printf '%s\n' "$FIXED_KEY" >/tmp/fixed_key
unset FIXED_KEY
# The guest is shared with later tests: no key stays.
trap 'rm -f /tmp/fixed_key' EXIT
modprobe -a dm_crypt xts 2>/dev/null
NODE=(--multipath "${COMMON[@]}" --fixed-key-file /tmp/fixed_key)
cp /brick/csikubelet /brick/csi-sanity /tmp/
csistate() { # LABEL: sessions, sd disks, dm maps, brick records, mounts under kubelet's directory
	local m n=0
	while read -r _ _ _ _ m _; do [[ $m == /var/lib/kubelet/* ]] && n=$((n + 1)); done </proc/self/mountinfo
	echo "STATE $1 $(nsessions) $(nsd) $(ndm) $(nglob /var/lib/brick/volumes/*.json) $n"
}

t0=$(now)
/tmp/csikubelet -brick "$B" -work /tmp/csik -logs /brick -cinder "$API" -project "$P" \
	-node-args "${NODE[*]}" -encrypted-type "$ENC_TYPE" -rounds "$ROUNDS" >/brick/kubelet.out 2>/brick/kubelet.err
echo "RC kubelet $?"
took kubelet "$t0"
cat /brick/kubelet.out
csistate kubelet

` + csiSanityShell + `
csistate sanity
# The shared guest goes on to other tests: kubelet's tree goes too (never
# across a mount left behind, which the STATE line reports).
rm -rf --one-file-system /var/lib/kubelet /tmp/csik /tmp/sanity
echo DONE
`

// csiSanityShell runs csi-sanity (/tmp/csi-sanity) once per access type
// in SANITY_ACCESS (SANITY_FOCUS: a ginkgo focus) against brick csi --mode
// all with the node flags in NODE, then stops the plugin.
const csiSanityShell = `
mkdir -p /tmp/sanity /var/lib/kubelet/plugins/sanity /var/lib/kubelet/pods/sanity
$B csi --mode all --endpoint unix:///tmp/sanity/csi.sock "${NODE[@]}" >/brick/sanity-plugin.log 2>&1 &
spid=$!
for ((i = 0; i < 300; i++)); do [[ -S /tmp/sanity/csi.sock ]] && break; pause 0.1; done
for access in $SANITY_ACCESS; do
	t0=$(now)
	/tmp/csi-sanity --csi.endpoint unix:///tmp/sanity/csi.sock \
		--csi.stagingdir /var/lib/kubelet/plugins/sanity/staging --csi.mountdir /var/lib/kubelet/pods/sanity/mount \
		--csi.testvolumesize 1073741824 --csi.testvolumeexpandsize 2147483648 \
		--csi.testvolumeaccesstype "$access" --csi.junitfile /brick/sanity-$access.xml --ginkgo.no-color \
		${SANITY_FOCUS:+--ginkgo.focus "$SANITY_FOCUS"} >/brick/sanity-$access.out 2>&1
	echo "RC sanity-$access $?"
	took sanity-$access "$t0"
	while read -r l; do [[ $l == Ran\ * || $l == *Passed*Failed* ]] && echo "SANITY $access $l"; done </brick/sanity-$access.out
done
kill -TERM $spid
wait $spid
echo "RC sanity-plugin $?"
`

func TestCSI(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares
	start := time.Now()
	c := needCinder(t, guestCinderOptions)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	sanity := installSanity(t, ctx)
	encType := cryptType(ctx, t, c, "luks")
	access := csiSanityAccess(t)
	t.Cleanup(func() { csiLeftovers(t, c) })
	files := map[string]string{buildTool(t, "csikubelet"): "csikubelet", sanity: "csi-sanity"}
	t.Logf("host side ready in %s", time.Since(start).Round(100*time.Millisecond))
	g := runSharedGuest(t, c, csiGuestScript, files, map[string]string{
		"FIXED_KEY": c.Env["BRICK_TB_CINDER_FIXED_KEY"], "ENC_TYPE": encType, "ROUNDS": csiRounds(t),
		"SANITY_ACCESS": strings.Join(access, " "), "SANITY_FOCUS": "",
	}, nil)
	t.Run("kubelet", func(t *testing.T) { csiKubeletChecks(t, g) })
	for _, a := range access {
		t.Run("sanity-"+a, func(t *testing.T) { csiSanityChecks(t, g, a) })
	}
	require.Equal(t, "0", g.rc("sanity-plugin"), "brick csi --mode all ends cleanly on SIGTERM")
	require.Equal(t, []string{"0", "0", "0", "0", "0"}, g.lines["STATE sanity"], "after csi-sanity: sessions, disks, maps, records, mounts")
}

// csiRounds is how many interleaved NodeStage+NodePublish / local-attach
// rounds csikubelet times: BRICK_E2E_CSI_ROUNDS (the figures of
// docs/kubernetes.md took 5), else 1, which keeps the suite short.
func csiRounds(t *testing.T) string {
	v := os.Getenv("BRICK_E2E_CSI_ROUNDS")
	if v == "" {
		return "1"
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "BRICK_E2E_CSI_ROUNDS")
	require.True(t, n >= 1 && n <= 20, "BRICK_E2E_CSI_ROUNDS %d: 1 to 20", n)
	return v
}

// csiSanityAccess are the access types csi-sanity runs with:
// BRICK_E2E_CSI_SANITY_ACCESS, else mount only.
func csiSanityAccess(t *testing.T) []string {
	v := strings.Fields(os.Getenv("BRICK_E2E_CSI_SANITY_ACCESS"))
	if len(v) == 0 {
		return []string{"mount"}
	}
	for _, a := range v {
		require.Contains(t, []string{"mount", "block"}, a, "BRICK_E2E_CSI_SANITY_ACCESS")
	}
	return v
}

// installSanity builds csi-sanity once per machine (cached; about 3
// minutes cold) and returns its path.
func installSanity(t *testing.T, ctx context.Context) string {
	t.Helper()
	begin := time.Now()
	out, err := exec.CommandContext(ctx, "../csi/install-sanity.sh").Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "test/csi/install-sanity.sh: %s", stderr)
	path := strings.TrimSpace(string(out))
	t.Logf("csi-sanity %s (%s)", path, time.Since(begin).Round(time.Millisecond))
	return path
}

// csiKubeletChecks reads csikubelet's lines.
func csiKubeletChecks(t *testing.T, g *guestRun) {
	for k, v := range g.lines {
		if strings.HasPrefix(k, "STEP ") || strings.HasPrefix(k, "CODE ") || strings.HasPrefix(k, "RSS ") || strings.HasPrefix(k, "DF ") {
			t.Logf("%s %s", k, strings.Join(v, " "))
		}
	}
	require.Equal(t, "0", g.rc("kubelet"), "csikubelet failed: see its STEP lines")
	for _, s := range []string{"start", "provision", "two-pods", "republish", "expand", "snapshot", "bad-requests", "timing", "encrypted", "idle-rss", "delete", "end"} {
		v := g.lines["STEP "+s]
		require.NotEmpty(t, v, "step %s did not run", s)
		require.Equal(t, "ok", v[0], "step %s: %v", s, v)
	}
	for name, want := range map[string]string{"create-no-capability": "InvalidArgument", "create-unknown-parameter": "InvalidArgument",
		"create-size-0": "InvalidArgument", "publish-not-uuid": "NotFound", "stage-not-uuid": "NotFound",
		"stage-no-capability": "InvalidArgument", "publish-outside-kubelet-dir": "InvalidArgument"} {
		require.Equal(t, []string{want}, g.lines["CODE "+name], name)
	}
	require.Equal(t, []string{"0", "0", "0", "0", "0"}, g.lines["STATE kubelet"], "after the kubelet run: sessions, disks, maps, records, mounts")
	csiFigures(t, g)
}

// csiFigures logs issue 37's figures: NodeStage+NodePublish against brick
// local-attach (median of the rounds), the plugins' RSS.
func csiFigures(t *testing.T, g *guestRun) {
	rounds := func(prefix string) []float64 {
		var v []float64
		for i := 1; ; i++ {
			f := g.lines["TIME "+prefix+strconv.Itoa(i)]
			if len(f) != 1 {
				return v
			}
			x, err := strconv.ParseFloat(f[0], 64)
			require.NoError(t, err, "TIME %s%d", prefix, i)
			v = append(v, x)
		}
	}
	spv, lav := rounds("stage-publish-"), rounds("local-attach-")
	sp, la := nvmeMedian(spv), nvmeMedian(lav)
	if la > 0 {
		t.Logf("FIGURE NodeStage+NodePublish %.3f s vs brick local-attach --mountpoint %.3f s (median of %d interleaved rounds): %.2fx; rounds %v vs %v",
			sp, la, len(spv), sp/la, spv, lav)
	}
	for _, p := range []string{"controller", "node"} {
		t.Logf("FIGURE %s RSS at start %v kB, idle after the run %v kB", p, g.lines["RSS "+p+"-start"], g.lines["RSS "+p+"-idle"])
	}
}

// junit is the part of csi-sanity's JUnit report the checks read.
type junit struct {
	Suites []struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Time    string `xml:"time,attr"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// csiSanityChecks: csi-sanity passed every spec it ran; the skipped ones
// are listed with ginkgo's reason.
func csiSanityChecks(t *testing.T, g *guestRun, access string) {
	t.Logf("csi-sanity (%s): %s s; %v; %v", access, strings.Join(g.lines["TIME sanity-"+access], " "),
		g.lines["SANITY "+access], summaryLine(g.out, "SANITY "+access))
	b, err := os.ReadFile(filepath.Join(g.share, "sanity-"+access+".xml"))
	require.NoError(t, err, "csi-sanity's report")
	var r junit
	require.NoError(t, xml.Unmarshal(b, &r))
	var skipped, failed []string
	for _, s := range r.Suites {
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				failed = append(failed, c.Name+": "+clip(c.Failure.Message, 600))
			case c.Skipped != nil:
				skipped = append(skipped, c.Name+": "+clip(c.Skipped.Message, 200))
			}
		}
		t.Logf("csi-sanity (%s): %d specs, %d failed, %d skipped", access, s.Tests, s.Failures, s.Skipped)
	}
	sort.Strings(skipped)
	for _, s := range skipped {
		t.Logf("skipped: %s", s)
	}
	for _, f := range failed {
		t.Errorf("failed: %s", f)
	}
	require.Equal(t, "0", g.rc("sanity-"+access), "csi-sanity exit status")
}

func summaryLine(out, prefix string) []string {
	var l []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, prefix) {
			l = append(l, strings.TrimPrefix(line, prefix+" "))
		}
	}
	return l
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// csiLeftovers fails the test for any volume or snapshot the CSI runs left
// in Cinder (csikubelet's pvc-csikubelet-*, csi-sanity's sanity-*) and
// removes them.
func csiLeftovers(t *testing.T, c *testbed.Cinder) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var snaps struct{ Snapshots []struct{ ID, Name string } }
	if err := c.Request(ctx, http.MethodGet, "/snapshots", "", nil, &snaps); err != nil {
		t.Errorf("csi leftovers: %v", err)
		return
	}
	for _, s := range snaps.Snapshots {
		if csiName(s.Name) {
			t.Errorf("isolation: snapshot %s (%s) left in Cinder", s.ID, s.Name)
			_ = c.Request(ctx, http.MethodDelete, "/snapshots/"+s.ID, "", nil, nil)
			_ = waitGone(ctx, c, "/snapshots/"+s.ID)
		}
	}
	var vols struct{ Volumes []*testbed.Volume }
	if err := c.Request(ctx, http.MethodGet, "/volumes/detail", "", nil, &vols); err != nil {
		t.Errorf("csi leftovers: %v", err)
		return
	}
	var left []*testbed.Volume
	for _, v := range vols.Volumes {
		if csiName(v.Name) {
			t.Errorf("isolation: volume %s (%s) left in Cinder, %s", v.ID, v.Name, v.Status)
			left = append(left, v)
		}
	}
	deleteVolumes(t, c, left)
}

func csiName(name string) bool {
	return strings.HasPrefix(name, "pvc-csikubelet") || strings.HasPrefix(name, "sanity")
}
