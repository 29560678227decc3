// Command demo shows brick's main job on this machine (make demo): it
// starts the test bed's real standalone Cinder (test/cinder/up.sh), creates
// a volume, boots the real-kernel qemu guest the end-to-end tests use, and
// in it runs brick get-connector, local-attach, a write and a read through
// the device, list and local-detach, printing brick's own output at each
// step. Then it deletes the volume and stops what it started.
//
//	go run ./test/demo -brick bin/brick
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/internal/testbed/guest"
)

// guestScript runs in the guest as root: the host's Cinder is at 10.0.2.2.
const guestScript = `
set -uo pipefail
# Run brick from tmpfs (9p pages the binary in slowly), but show "brick".
mkdir -p /tmp/demo && cp /brick/brick /tmp/demo/brick && export PATH=/tmp/demo:$PATH
export OS_AUTH_TYPE=noauth BRICK_CINDER_ENDPOINT=http://10.0.2.2:8776/v3 BRICK_CONFIG=/dev/null
eval "$("$BRICK_FIXTURES/iscsi.sh")" # modules, udev, iscsid, multipathd
step() {
	echo
	echo "### $1"
}
run() {
	echo "# $*"
	local t0=$(date +%s%N)
	"$@"
	local rc=$?
	echo "(exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
	return $rc
}
step "1. this host's connector: what Cinder needs to export a volume here"
run brick get-connector || exit 1
step "2. attach volume $VOL (Cinder's attachments API, iSCSI login, device verified)"
run brick local-attach "$VOL" --nic eth0 || exit 1
run brick get-volume-paths "$VOL" || exit 1
dev=$(brick get-volume-paths "$VOL" | head -1)
step "3. write through $dev and read it back"
echo "# echo 'hello from brick' | dd of=$dev oflag=direct"
printf 'hello from brick %s\n' "$(date -u +%FT%TZ)" | dd of="$dev" bs=512 count=1 conv=sync oflag=direct status=none || exit 1
dd if="$dev" bs=512 count=1 iflag=direct status=none | tr -d '\0'
step "4. what brick has attached here"
run brick list || exit 1
step "5. detach (flush, logout, Cinder attachment deleted)"
run brick local-detach "$VOL" || exit 1
run brick list
`

func main() {
	bin := flag.String("brick", "bin/brick", "the brick binary to run in the guest (make build)")
	timeout := flag.Duration("timeout", 20*time.Minute, "time limit for the whole demo")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := demo(ctx, *bin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func demo(ctx context.Context, bin string, out io.Writer) (err error) {
	start := time.Now()
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("brick binary: %w (run make build)", err)
	}
	say := func(format string, args ...any) {
		fmt.Fprintf(out, "demo [%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}

	say("starting the standalone Cinder (noauth, sqlite, tgtd; test/cinder/up.sh)")
	// The e2e tests' settings, so a Cinder they left running is reused as is.
	c, err := testbed.EnsureCinder(ctx, testbed.CinderOptions{TargetIP: testbed.GuestHostIP, SecondaryIPs: []string{testbed.GuestHostIP2}})
	if err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		err = errors.Join(err, testbed.StopStarted(stopCtx))
		say("stopped what the demo started (Cinder started by it: %v)", c.Started)
	}()
	say("Cinder ready at %s (started now: %v)", c.Endpoint, c.Started)

	vol, err := c.CreateVolume(ctx, "brick-demo", 1)
	if err != nil {
		return err
	}
	defer func() {
		delCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		err = errors.Join(err, c.DeleteVolume(delCtx, vol.ID))
		say("volume %s deleted", vol.ID)
	}()
	say("volume %s (1 GiB) created; booting the qemu guest with Debian's kernel", vol.ID)

	share, err := os.MkdirTemp("", "brick-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(share)
	tailCtx, stopTail := context.WithCancel(ctx)
	tailed := make(chan struct{})
	go func() { defer close(tailed); follow(tailCtx, filepath.Join(share, ".brick", "output"), out) }()
	res, err := guest.Run(ctx, guest.Options{
		Script: guestScript, Files: map[string]string{abs: "brick"}, NICs: 1, ShareDir: share,
		Env: map[string]string{"VOL": vol.ID, "PROJECT": c.ProjectID}, Timeout: 10 * time.Minute, RequireClean: true,
	})
	stopTail()
	<-tailed
	if err != nil {
		return fmt.Errorf("guest: %w", err)
	}
	say("guest: boot %s, script %s, wall %s", res.Boot.Round(time.Second/10), res.ScriptTime.Round(time.Second/10), res.Duration.Round(time.Second/10))
	if res.ExitCode != 0 {
		return fmt.Errorf("a step failed in the guest (exit %d)", res.ExitCode)
	}
	v, err := c.GetVolume(ctx, vol.ID)
	if err != nil {
		return err
	}
	say("Cinder says volume %s is %s again", vol.ID, v.Status)
	return nil
}

// follow copies what the guest script writes to the share's output file
// to out as it appears, until ctx ends, then copies the rest.
func follow(ctx context.Context, path string, out io.Writer) {
	var done int64
	flush := func() {
		data, err := os.ReadFile(path)
		if err == nil && int64(len(data)) > done {
			// Only whole lines, so the step headers come out intact.
			chunk := data[done:]
			if ctx.Err() == nil {
				if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
					chunk = chunk[:i+1]
				} else {
					chunk = nil
				}
			}
			_, _ = out.Write(chunk)
			done += int64(len(chunk))
		}
	}
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			flush()
			return
		case <-tick.C:
			flush()
		}
	}
}
