//go:build e2e

package e2e

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
)

// dockerGuestScript proves the Docker volume plugin in one boot: dockerd
// from Debian in the guest, the plugin started with the systemd unit's
// ExecStart, volumes of the host's real Cinder over iSCSI. It prints the
// same STATE/RC/TIME lines as attachGuestScript. One container (c1) carries
// most proofs in turn to spend as few attaches as possible: its first write
// is timed, a second container shares its attach and reads its file, the
// plugin is killed under it, and dockerd's restart stops and restarts it.
const dockerGuestScript = `
set -uo pipefail
# Every step timed into /brick/trace.log (kept with BRICK_E2E_KEEP_SHARES).
exec 5>/brick/trace.log; BASH_XTRACEFD=5; PS4='+ $EPOCHREALTIME '; set -x
cp /brick/brick /tmp/brick
B=/tmp/brick
P=$PROJECT
API=http://10.0.2.2:8776/v3
export OS_AUTH_TYPE=noauth BRICK_CONFIG=/dev/null BRICK_CINDER_ENDPOINT=$API
export BRICK_NIC=eth0 BRICK_ISCSI_LOGIN_TIMEOUT=8s BRICK_DEVICE_TIMEOUT=10s
D=/usr/bin/docker
SOCK=/run/docker/plugins/brick.sock

api() { curl -sf -m 30 -H "X-Auth-Token: brick:$P" -H "OpenStack-API-Version: volume 3.70" -H "Content-Type: application/json" "$API/$P/$1" "${@:2}"; }
vstatus() {
	local out
	if out=$(api "volumes/$1"); then
		out=${out#*\"status\": \"}; echo "${out%%\"*}"
	else
		echo gone
	fi
}
# Counts from sysfs and globs, times from /proc/uptime (two decimals), all
# with builtins: every process start costs under TCG.
count() { local n=0 p; for p in "$@"; do [[ -e $p ]] && n=$((n + 1)); done; echo "$n"; }
ndm() {
	local u n=0 f
	for f in /sys/block/dm-*/dm/uuid; do
		[[ -e $f ]] && read -r u <"$f" && [[ $u == mpath-* ]] && n=$((n + 1))
	done
	echo "$n"
}
state() {
	echo "STATE $1 $(vstatus "$2") - $(count /sys/class/iscsi_session/session*) $(count /sys/block/sd*) $(ndm) $(count /var/lib/brick/volumes/*.json)"
}
up() { local u _; read -r u _ </proc/uptime; echo "$u"; }
took() {
	local b=${3:-$(up)} d sign=
	d=$((10#${b/./} - 10#${2/./}))
	((d < 0)) && sign=- d=$((-d))
	printf 'TIME %s %s%d.%02d\n' "$1" "$sign" $((d / 100)) $((d % 100))
}
[[ -p /tmp/.pause ]] || mkfifo /tmp/.pause
pause() { read -r -t "$1" _ <>/tmp/.pause || true; } # sleep without a process
# The docker CLI costs seconds a call under TCG: the steps that only look
# or set up talk to dockerd's API with curl; docker itself runs the steps
# whose behaviour or output the proofs are about.
dapi() { curl -sf -m 150 --unix-socket /run/docker.sock "${@:2}" "http://docker/v1.41$1"; }
status_field() {
	local j re="\"$2\":\"?([^\",}]*)"
	j=$(dapi "/volumes/$1") && [[ $j =~ $re ]] && echo "${BASH_REMATCH[1]}"
}
mounts() { status_field "$1" mounts; }
waitfor() { local i; for ((i = 0; i < 600; i++)); do "$@" && return 0; pause 0.1; done; return 1; }
ping_dockerd() { curl -sf -m 2 --unix-socket /run/docker.sock http://docker/_ping >/dev/null 2>&1; }
ping_plugin() { curl -sf -m 2 --unix-socket $SOCK -X POST http://plugin/Plugin.Activate >/dev/null 2>&1; }

EXEC=$(sed -n 's/^ExecStart=//p' /brick/plugin.service)
EXEC=${EXEC//\/usr\/sbin\/brick/$B}
echo "UNIT-EXEC $EXEC"
start_plugin() { setsid $EXEC -v </dev/null >>/brick/plugin.log 2>&1 & PLUGIN=$!; }
start_dockerd() {
	setsid dockerd --storage-driver=vfs --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --bridge=none </dev/null >>/brick/dockerd.log 2>&1 &
	DOCKERD=$!
}

# dockerd takes seconds to answer: start it first, set up iSCSI meanwhile.
mount -t cgroup2 none /sys/fs/cgroup
mkdir -p /var/lib/docker && mount -t tmpfs tmpfs /var/lib/docker
t0=$(up); start_dockerd
eval "$("$BRICK_FIXTURES/iscsi.sh")"
start_plugin; waitfor ping_plugin; echo "RC plugin $?"
waitfor ping_dockerd; echo "RC dockerd $?"; took dockerd "$t0"
echo "SOCKMODE $(stat -c %a $SOCK)"
dapi '/images/create?fromSrc=-&repo=img' -X POST -H 'Content-Type: application/x-tar' --data-binary @/brick/img.tar >/dev/null; echo "RC import $?"
RUN=($D run --network none)

# Baseline: docker run to the first instruction of a container, no volume.
t0=$(up)
u=$("${RUN[@]}" --rm img sh -c 'read u _ </proc/uptime; echo $u')
took run-novolume "$t0" "$u"

# 1. Create; c1's first write on the blank volume, timed from docker run.
t0=$(up); $D volume create -d brick -o size=1 brick-e2e-dv1 >/dev/null 2>/brick/create.err; echo "RC create $?"; took create "$t0"
VID=$(status_field brick-e2e-dv1 volume_id)
echo "VID dv1 $VID"
MP=/var/lib/brick/docker/mnt/$VID
state created "$VID"
writer='echo hello >/data/f; read u _ </proc/uptime; echo $u >/data/fw; trap "exit 0" TERM; i=0; while true; do i=$((i+1)); echo $i >>/data/log; sync; sleep 0.3; done'
idle='cat /data/f; trap "exit 0" TERM; while true; do sleep 1; done'
t0=$(up)
"${RUN[@]}" -d --name c1 -v brick-e2e-dv1:/data img sh -c "$writer" >/dev/null
echo "RC c1 $?"
took run-c1 "$t0"
fw=; for ((i = 0; i < 100; i++)); do [[ -s $MP/fw ]] && read -r fw <"$MP/fw" && break; pause 0.1; done
took run-firstwrite "$t0" "${fw:-0}"

# 2. A second container shares the attach (refcount 2) and reads c1's file.
# Created and started through the API (what docker run -d asks of dockerd)
# without the CLI's seconds of start-up; c1 and the baseline keep the CLI.
dapi '/containers/create?name=c2' -X POST -H 'Content-Type: application/json' \
	-d '{"Image":"img","Cmd":["sh","-c","'"${idle//\"/\\\"}"'"],"HostConfig":{"Binds":["brick-e2e-dv1:/data"],"NetworkMode":"none"}}' >/dev/null &&
	dapi /containers/c2/start -X POST
echo "RC c2 $?"
echo "MOUNTS two $(mounts brick-e2e-dv1)"
state two "$VID"
# The log stream's frame header is binary: keep the printable text.
echo "READ $(dapi '/containers/c2/logs?stdout=1&stderr=1' | tr -cd '[:print:]')"
dapi '/containers/c2?force=1' -X DELETE; echo "RC rm-c2 $?"
echo "MOUNTS one $(mounts brick-e2e-dv1)"
state one "$VID"

# 3. kill -9 of the plugin: c1 keeps writing; the restarted plugin knows it.
kill -9 $PLUGIN
# Until c1's log grows (it writes every 0.3 s), 10 s at most.
n1=$(wc -l <"$MP/log")
for ((i = 0; i < 50; i++)); do pause 0.2; n2=$(wc -l <"$MP/log"); ((n2 > n1)) && break; done
echo "IO-WHILE-DEAD lines $n1 $n2"
t0=$(up); start_plugin; waitfor ping_plugin; echo "RC plugin-restart $?"; took plugin-restart "$t0"
echo "MOUNTS restarted $(mounts brick-e2e-dv1)"

# 4. dockerd restarted under c1: its shutdown stops c1, whose Unmount (the
# restarted plugin's) detaches; then c1 starts and stops again.
t0=$(up); kill -TERM $DOCKERD; wait $DOCKERD; took dockerd-stop "$t0"
state dockerd-down "$VID"
t0=$(up); start_dockerd; waitfor ping_dockerd; echo "RC dockerd-restart $?"; took dockerd-restart "$t0"
dapi /containers/c1/start -X POST; echo "RC start-c1 $?"
echo "MOUNTS c1-again $(mounts brick-e2e-dv1)"
state c1-again "$VID"
dapi '/containers/c1/stop?t=5' -X POST; echo "RC stop-c1 $?"; dapi /containers/c1 -X DELETE
state after-c1 "$VID"

# 5. Bad input: each refused in one line, nothing created or attached.
# VOL_BUSY is attached to another host ("elsewhere") by the test. The five
# docker calls run side by side: each costs seconds of CLI start-up.
bad() {
	local label=$1; shift
	$D volume create -d brick "$@" >/dev/null 2>/brick/bad-$label.err
	echo $? >/brick/bad-$label.rc
}
t0=$(up); pids=()
bad unknown -o sise=1 brick-e2e-bad1 & pids+=($!)
bad size0 -o size=0 brick-e2e-bad2 & pids+=($!)
bad huge -o size=99999999 brick-e2e-bad3 & pids+=($!)
bad dotdot ../x & pids+=($!)
bad busy -o volume=$VOL_BUSY brick-e2e-bad4 & pids+=($!)
# Not a bare wait: dockerd and the plugin are children too.
wait "${pids[@]}"; took bad "$t0"
for label in unknown size0 huge dotdot busy; do
	echo "RC bad-$label $(</brick/bad-$label.rc)"
	echo "ERRLINE-$label $(head -c 300 /brick/bad-$label.err | head -1)"
	echo "ERRLINES $label $(grep -c . /brick/bad-$label.err)"
done
echo "BADVOLS n $(api 'volumes?all_tenants=1' | grep -o '"name": "brick-e2e-bad[^"]*"' | grep -c . || true)"
echo "DOCKERVOLS n $(dapi /volumes | grep -o '"Name":"[^"]*"' | cut -d'"' -f4 | tr '\n' ' ')"
state after-bad "$VOL_BUSY"

# 6. Adopt an available volume; removing it leaves it in Cinder.
dapi /volumes/create -X POST -H 'Content-Type: application/json' -d '{"Name":"brick-e2e-adopted","Driver":"brick","DriverOpts":{"volume":"'$VOL_ADOPT'"}}' >/dev/null; echo "RC adopt $?"
dapi /volumes/brick-e2e-adopted -X DELETE; echo "RC rm-adopted $?"
echo "ADOPTED-AFTER status $(vstatus $VOL_ADOPT)"

# 7. volume rm deletes the plugin's volume in Cinder.
$D volume rm brick-e2e-dv1 >/dev/null; echo "RC rm $?"
echo "DELETED status $(vstatus "$VID")"

# 8. The CLI alone, the same steps as the plugin's first mount (mkfs too).
t0=$(up)
$B local-attach "$VOL_CLI" --mountpoint /mnt/cli --mkfs ext4 -f json >/brick/cli.json 2>/brick/cli.err
echo "RC cli-attach $?"; took cli-attach "$t0"
echo hello >/mnt/cli/f; took cli-firstwrite "$t0"
$B local-detach "$VOL_CLI" >/brick/cli-detach.err 2>&1; echo "RC cli-detach $?"
state after-cli "$VOL_CLI"

kill -TERM $DOCKERD; wait $DOCKERD
kill -TERM $PLUGIN; wait $PLUGIN; echo "RC plugin-stop $?"
# The guest is shared with the next test: leave it as a boot found it.
umount /var/lib/docker /sys/fs/cgroup
echo DONE
`

// TestDockerPlugin is issue 25's proof with a real dockerd: create, write
// and read across containers, one attach shared by two containers, kill
// -9 of the plugin under a writing container, a dockerd restart, bad input
// shown by docker, adopt and remove, and the time from docker run to the
// first write against the CLI's local-attach.
func TestDockerPlugin(t *testing.T) {
	lane(t, laneServices)
	sharedGuest.prestart() // boots while the host prepares, unless up
	start := time.Now()
	c := needCinder(t, guestCinderOptions)
	env := map[string]string{}
	keys := []string{"BUSY", "ADOPT", "CLI"}
	var names []string
	for _, k := range keys {
		names = append(names, "brick-e2e-docker-"+strings.ToLower(k))
	}
	for i, v := range newVolumes(t, c, names...) {
		env["VOL_"+keys[i]] = v.ID
	}
	t.Cleanup(func() { deleteNamed(t, c, "brick-e2e-dv1") })
	attachElsewhere(t, c, env["VOL_BUSY"])
	img := busyboxImage(t)
	unit, err := filepath.Abs("../../packaging/systemd/brick-docker-plugin.service")
	require.NoError(t, err)
	g := runSharedGuest(t, c, dockerGuestScript, map[string]string{img: "img.tar", unit: "plugin.service"}, env, nil)
	pluginLog, _ := os.ReadFile(filepath.Join(g.share, "plugin.log"))
	t.Logf("plugin log:\n%s", pluginLog)
	checkDockerRun(t, g, string(pluginLog))
	t.Logf("TestDockerPlugin wall %v", time.Since(start).Round(time.Millisecond))
}

// checkDockerRun checks dockerGuestScript's output lines.
func checkDockerRun(t *testing.T, g *guestRun, pluginLog string) {
	for _, rc := range []string{"plugin", "dockerd", "import", "create", "c1", "c2", "rm-c2", "plugin-restart",
		"dockerd-restart", "start-c1", "stop-c1", "adopt", "rm-adopted", "rm", "cli-attach", "cli-detach", "plugin-stop"} {
		require.Equal(t, "0", g.rc(rc), rc)
	}
	require.Contains(t, g.out, "SOCKMODE 600")
	require.Len(t, g.lines["VID dv1"], 1)
	clean := []string{"available", "-", "0", "0", "0", "0"}
	attached := []string{"in-use", "-", "1", "1", "0", "1"}
	require.Equal(t, clean, g.st("created"))
	t.Run("two containers share one attach", func(t *testing.T) {
		require.Contains(t, g.out, "\nREAD hello\n", "the second container reads the first one's file")
		require.Equal(t, []string{"2"}, g.lines["MOUNTS two"])
		require.Equal(t, attached, g.st("two"), "two containers, one session, one device, one record")
		require.Equal(t, []string{"1"}, g.lines["MOUNTS one"])
		require.Equal(t, attached, g.st("one"))
	})
	t.Run("kill -9 of the plugin under a running container", func(t *testing.T) {
		io := g.lines["IO-WHILE-DEAD lines"]
		require.Len(t, io, 2)
		n1, _ := strconv.Atoi(io[0])
		n2, _ := strconv.Atoi(io[1])
		require.Greater(t, n2, n1, "the container kept writing while the plugin was dead")
		require.Equal(t, []string{"1"}, g.lines["MOUNTS restarted"], "the restarted plugin knows the running container")
	})
	t.Run("dockerd restart", func(t *testing.T) {
		require.Equal(t, clean, g.st("dockerd-down"), "dockerd's shutdown stopped the container: detached through the restarted plugin")
		require.Equal(t, []string{"1"}, g.lines["MOUNTS c1-again"])
		require.Equal(t, attached, g.st("c1-again"))
		require.Equal(t, clean, g.st("after-c1"))
	})
	t.Run("bad input", func(t *testing.T) {
		for label, want := range map[string]string{"unknown": `unknown option "sise"`, "size0": `size="0"`, "huge": "from 1 to",
			"dotdot": `volume name "../x"`, "busy": "is in-use (attached to elsewhere): refusing to adopt a volume in use elsewhere"} {
			require.NotEqual(t, "0", g.rc("bad-"+label), label)
			require.Regexp(t, "ERRLINE-"+label+" Error response from daemon: .*"+regexp.QuoteMeta(want), g.out, label)
			require.Equal(t, []string{"1"}, g.lines["ERRLINES "+label], "%s: one line", label)
		}
		require.Equal(t, []string{"0"}, g.lines["BADVOLS n"], "no Cinder volume created by bad input")
		require.Equal(t, []string{"brick-e2e-dv1"}, g.lines["DOCKERVOLS n"], "no docker volume created by bad input")
		require.Equal(t, []string{"in-use", "-", "0", "0", "0", "0"}, g.st("after-bad"), "the volume refused for adoption is untouched")
	})
	require.Equal(t, []string{"available"}, g.lines["ADOPTED-AFTER status"], "an adopted volume is never deleted")
	require.Equal(t, []string{"gone"}, g.lines["DELETED status"], "docker volume rm deletes the plugin's volume in Cinder")
	require.Equal(t, clean, g.st("after-cli"))
	logOverhead(t, g, pluginLog)
}

// logOverhead reports what the plugin adds to an attach: docker run to the
// container's first write on a blank volume, less docker run to a
// container's first instruction without a volume, against the CLI's
// local-attach (mkfs and mount included) to its first write; and the
// plugin's own Mount call against the CLI's local-attach.
func logOverhead(t *testing.T, g *guestRun, pluginLog string) {
	t.Helper()
	sec := func(label string) float64 {
		v := g.lines["TIME "+label]
		require.Len(t, v, 1, "TIME %s", label)
		f, err := strconv.ParseFloat(v[0], 64)
		require.NoError(t, err, label)
		return f
	}
	withVol, noVol, cliAttach, cliWrite := sec("run-firstwrite"), sec("run-novolume"), sec("cli-attach"), sec("cli-firstwrite")
	require.Greater(t, withVol, 0.0, "c1 wrote its first-write time")
	m := regexp.MustCompile(`call=/VolumeDriver\.Mount volume=brick-e2e-dv1 took=(\S+)`).FindStringSubmatch(pluginLog)
	require.NotNil(t, m, "the plugin logged its first Mount")
	mount, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	added := withVol - noVol
	t.Logf("times (s): dockerd start %v, restart %v, stop %v; plugin restart %v; create %v; docker run to first instruction without a volume %.2f, to first write on a blank plugin volume %.2f (the volume adds %.2f); plugin Mount call %.2f; CLI local-attach (mkfs+mount) %.2f, to first write %.2f; plugin overhead: docker run %+.1f%%, Mount call %+.1f%%",
		g.lines["TIME dockerd"], g.lines["TIME dockerd-restart"], g.lines["TIME dockerd-stop"], g.lines["TIME plugin-restart"], g.lines["TIME create"],
		noVol, withVol, added, mount.Seconds(), cliAttach, cliWrite, 100*(added-cliWrite)/cliWrite, 100*(mount.Seconds()-cliAttach)/cliAttach)
	// Not asserted: the plugin's Mount is the boot's first attach (cold
	// iscsiadm, mkfs, udev), the CLI's a later one; the runs so far put
	// either side ahead (docs/docker.md).
}

// deleteNamed deletes the volumes of that name a failed run left in Cinder.
func deleteNamed(t *testing.T, c *testbed.Cinder, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out struct {
		Volumes []struct{ ID string } `json:"volumes"`
	}
	if err := c.Request(ctx, "GET", "/volumes?name="+name, "", nil, &out); err != nil {
		t.Logf("cleanup: list %s: %v", name, err)
		return
	}
	for _, v := range out.Volumes {
		_ = c.Request(ctx, "POST", "/volumes/"+v.ID+"/action", "", map[string]any{"os-reset_status": map[string]any{"status": "available", "attach_status": "detached"}}, nil)
		if err := c.DeleteVolume(ctx, v.ID); err != nil {
			t.Logf("cleanup: delete %s: %v", v.ID, err)
		}
	}
}

// attachElsewhere attaches a volume to another host ("elsewhere") through
// Cinder's attachments API, as another host's brick or Nova would.
func attachElsewhere(t *testing.T, c *testbed.Cinder, volumeID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out struct {
		Attachment struct{ ID string } `json:"attachment"`
	}
	conn := map[string]any{"host": "elsewhere", "initiator": "iqn.2026-12.org.brick:elsewhere", "ip": "127.0.0.9",
		"platform": "x86_64", "os_type": "linux", "multipath": false}
	body := map[string]any{"attachment": map[string]any{"volume_uuid": volumeID, "mode": "rw", "connector": conn}}
	require.NoError(t, c.Request(ctx, "POST", "/attachments", "3.54", body, &out))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Request(ctx, "DELETE", "/attachments/"+out.Attachment.ID, "3.54", nil, nil); err != nil {
			t.Logf("cleanup: delete attachment %s: %v", out.Attachment.ID, err)
		}
	})
	require.NoError(t, c.Request(ctx, "POST", "/attachments/"+out.Attachment.ID+"/action", "3.54", map[string]any{"os-complete": nil}, nil))
}

// busyboxImage writes a docker import tarball: busybox-static and the
// applets the script uses, linked to it. It has no /data: Docker copies an
// image's content at a volume's mount point into the volume when it creates
// the container, a Mount and Unmount (attach and detach) of its own.
func busyboxImage(t *testing.T) string {
	t.Helper()
	bb, err := os.ReadFile("/bin/busybox")
	require.NoError(t, err, "busybox-static (test/install.sh)")
	p := filepath.Join(t.TempDir(), "img.tar")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, d := range []string{"bin/", "tmp/", "proc/", "sys/", "dev/", "etc/"} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755}))
	}
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bb))}))
	_, err = tw.Write(bb)
	require.NoError(t, err)
	for _, a := range []string{"sh", "cat", "echo", "sleep", "sync", "true"} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777}))
	}
	require.NoError(t, tw.Close())
	return p
}
