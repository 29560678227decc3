//go:build e2e

package e2e

// iSCSI proofs in a real kernel: the qemu guest runs tgtd (two portals,
// 127.0.0.1 and 127.0.0.2), iscsid, multipathd and udev, and the brick
// binary built from this tree connects and disconnects volumes for real.
// All checks run in one script (iscsi_proofs.sh) in the suite's shared
// guest (runSmokeGuest: no boot of its own), which it leaves clean.
//
//	go test -tags e2e -run TestISCSI -v ./test/e2e/

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/brick-storage/brick/internal/testbed/guest"
)

func TestISCSI(t *testing.T) {
	lane(t, laneGuestOnly)
	sharedGuest.prestart() // boots while brick builds, unless up
	script, err := os.ReadFile("iscsi_proofs.sh")
	if err != nil {
		t.Fatal(err)
	}
	brick := buildBrick(t) // shared with the other e2e tests (ironic_cli_test.go)
	// A loaded 2-core host boots slowly; give the one boot room.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	res, err := runSmokeGuest(t, ctx, guest.Options{
		Script:   string(script),
		Files:    map[string]string{brick: "brick"},
		Timeout:  25 * time.Minute, // ~3 min on an idle host; far more while other guests run
		ShareDir: guestShare(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	reportChecks(t, res, "")
}
