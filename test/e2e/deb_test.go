//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var debPackage struct {
	once          sync.Once
	path, version string
	err           error
	out           []byte
}

// buildDeb builds the Debian package once per test process, as make deb
// does (the release binary, not the e2e one), and returns its path and the
// version its binary reports.
func buildDeb(t *testing.T) (path, version string) {
	t.Helper()
	debPackage.once.Do(func() {
		dir, err := os.MkdirTemp("", "brick-e2e-deb-")
		if err != nil {
			debPackage.err = err
			return
		}
		v, err := exec.Command("../../scripts/version.sh").Output()
		if err != nil {
			debPackage.err = err
			return
		}
		debPackage.version = strings.TrimSpace(string(v))
		// As make build: brick without the CSI driver, brick-csi beside it,
		// stripped, with the version. Not -trimpath: it changes every
		// package's compile, so it would rebuild the whole dependency tree
		// (about half a minute on a cold cache) instead of reusing what the
		// test binary's and buildBrick's builds just compiled; it only
		// changes the source paths recorded in the binary.
		bin := filepath.Join(dir, "brick")
		for out, tags := range map[string]string{bin: "nocsi", filepath.Join(dir, "brick-csi"): ""} {
			build := exec.Command("go", "build", "-tags", tags, "-ldflags", "-s -w -X main.version="+debPackage.version, "-o", out, "../../cmd/brick")
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if debPackage.out, debPackage.err = build.CombinedOutput(); debPackage.err != nil {
				return
			}
		}
		// Uncompressed: xz would cost ~20 s here and the guest's dpkg -i
		// as long again under TCG; dpkg installs either the same way.
		pkg := exec.Command("../../packaging/deb.sh", bin, dir)
		pkg.Env = append(os.Environ(), "BRICK_DEB_COMPRESSION=none")
		out, err := pkg.CombinedOutput()
		debPackage.out, debPackage.err = out, err
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		debPackage.path = lines[len(lines)-1]
	})
	if debPackage.err != nil {
		t.Fatalf("build the Debian package: %v\n%s", debPackage.err, debPackage.out)
	}
	return debPackage.path, debPackage.version
}

// dpkg reads its whole database (some 140,000 file names over 9p) on every
// call, ~10 s under TCG; it needs none of the guest's devices, so the
// install and the removal run in the background beside the attach script's
// other steps, which use the tree's binary and no config.
//
// debInstallStart starts dpkg -i at the attach script's start.
const debInstallStart = `
rm -f /var/lib/man-db/auto-update # no mandb run under TCG
(
	t0=$(now)
	dpkg -i /brick/brick.deb >/brick/dpkg-i.out 2>&1
	echo "RC dpkg-i $?"
	took dpkg-i "$t0"
) >/tmp/dpkg-i.lines 2>&1 &
DPKG_I=$!
`

// debGuestScript checks the package (make deb) installed by
// debInstallStart: get-connector and one attach/detach of $VOL_LEGACY
// (then available again) with the packaged binary and its own
// /etc/brick/brick.yaml; then starts the removal (debRemoveWait ends it):
// dpkg -r must leave only the config (and mask a unit the operator
// enabled), and dpkg --purge nothing but brick's state.
const debGuestScript = `
# 5. The Debian package.
tpkg=$(now)
wait $DPKG_I
cat /tmp/dpkg-i.lines
sed 's/^/DPKG /' /brick/dpkg-i.out
dpkg -L brick >/brick/pkg-files.txt 2>&1
echo "PKGVERSION $(/usr/sbin/brick --version)"
pc=$(/usr/sbin/brick get-connector -f value -c initiator 2>&1)
echo "PKGCONNECTOR $([[ $pc == "$ISCSI_INITIATOR" ]] && echo ok || echo "bad:$pc")"
echo "PKGCSI $(/usr/sbin/brick csi --help 2>&1 | grep -c -e '^ *--kubelet-dir string')"
echo "PKGMAN $(ls /usr/share/man/man8/brick*.8.gz | grep -c .)"
echo "PKGCOMPLETE $(bash -c '. /usr/share/bash-completion/completions/brick && complete -p brick' 2>&1 | grep -c __start_brick)"
echo "PKGSTATEDIR $(stat -c '%a %U' /var/lib/brick)"
PB=(env -u BRICK_CONFIG /usr/sbin/brick)
"${PB[@]}" local-attach "$VOL_LEGACY" "${COMMON[@]}" -f json >/brick/attach-pkg.json 2>/brick/attach-pkg.err
echo "RC attach-pkg $?"
sed 's/^/ERR attach-pkg /' /brick/attach-pkg.err
state attached-pkg "$VOL_LEGACY"
"${PB[@]}" list -f value -c volume -c phase 2>&1 | sed 's/^/LIST pkg /'
"${PB[@]}" local-detach "$VOL_LEGACY" "${COMMON[@]}" >/brick/detach-pkg.out 2>&1
echo "RC detach-pkg $?"
state detached-pkg "$VOL_LEGACY"
# The operator enables the restore unit (offline: no systemd in the guest):
# remove masks it, purge removes the operator's link and the mask.
systemctl --root=/ enable brick-restore.service >/dev/null 2>&1
echo "PKGENABLED $(find /etc/systemd/system -name brick-restore.service -lname '/lib/*' | grep -c .)"
(
	dpkg -r brick >/brick/dpkg-r.out 2>&1
	echo "RC dpkg-r $?"
	echo "PKGMASKED $(readlink /etc/systemd/system/brick-restore.service)"
	while read -r f; do
		[[ -e $f && ! -d $f ]] && echo "PKGLEFT removed $f"
	done </brick/pkg-files.txt
	for d in /usr/share/doc/brick /usr/share/lintian/overrides/brick; do
		[[ -e $d ]] && echo "PKGLEFT removed $d"
	done
	dpkg --purge brick >/brick/dpkg-purge.out 2>&1
	echo "RC dpkg-purge $?"
	while read -r f; do
		[[ -e $f && $f == *brick* && $f != /var/lib/brick* ]] && echo "PKGLEFT purged $f"
	done </brick/pkg-files.txt
	echo "PKGUNITLINKS $(find /etc/systemd/system -name 'brick-*' | grep -c .)"
) >/tmp/dpkg-r.lines 2>&1 &
DPKG_R=$!
`

// debRemoveWait waits for the removal debGuestScript started and prints
// its lines.
const debRemoveWait = `
wait $DPKG_R
cat /tmp/dpkg-r.lines
took package "$tpkg"
`

// checkDeb asserts what debGuestScript printed.
func checkDeb(t *testing.T, g *guestRun, version string) {
	t.Helper()
	require.Equal(t, "0", g.rc("dpkg-i"), "dpkg -i")
	require.Contains(t, g.out, "PKGVERSION brick version "+version+"\n")
	require.Contains(t, g.out, "PKGCONNECTOR ok\n")
	require.Contains(t, g.out, "PKGCSI 1\n", "brick csi runs the packaged brick-csi")
	require.Regexp(t, `PKGMAN [1-9][0-9]\n`, g.out, "man pages installed")
	require.Contains(t, g.out, "PKGCOMPLETE 1\n", "bash completion")
	require.Contains(t, g.out, "PKGSTATEDIR 700 root\n")
	require.Equal(t, "0", g.rc("attach-pkg"), "local-attach with the packaged binary")
	require.Equal(t, "in-use", g.st("attached-pkg")[0])
	require.Equal(t, "0", g.rc("detach-pkg"))
	g.clean("detached-pkg")
	require.Equal(t, "0", g.rc("dpkg-r"))
	require.Equal(t, "0", g.rc("dpkg-purge"))
	require.Contains(t, g.out, "PKGENABLED 1\n", "the operator enabled brick-restore.service")
	require.Contains(t, g.out, "PKGMASKED /dev/null\n", "dpkg -r masks an enabled unit whose binary is gone")
	require.Contains(t, g.out, "PKGUNITLINKS 0\n", "dpkg --purge leaves no enablement or mask")
	var left []string
	for _, l := range strings.Split(g.out, "\n") {
		if strings.HasPrefix(l, "PKGLEFT ") {
			left = append(left, strings.TrimPrefix(l, "PKGLEFT "))
		}
	}
	require.Equal(t, []string{"removed /etc/brick/brick.yaml"}, left, "dpkg -r keeps only the config, --purge only state")
	t.Logf("package: dpkg -i %v s (beside the attaches), package checks to the end of the removal %v s", g.lines["TIME dpkg-i"], g.lines["TIME package"])
}
