//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
)

// TestNVMeoF (its scripts and helpers are in nvmeof_test.go and
// nvmeof_rdma_test.go) restarts the shared Cinder with the NVMe-oF target;
// every other Cinder test wants the guest's iSCSI Cinder. This file's name
// sorts after every other test file, so it runs last and nothing after it
// pays a second Cinder restart (8-9 s) to get the iSCSI one back.
func TestNVMeoF(t *testing.T) {
	lane(t, laneServices)
	g := bootNVMeGuest(t)
	ctx, cancel := context.WithTimeout(context.Background(), serviceStartTimeout)
	defer cancel()
	start := time.Now()
	c, err := testbed.EnsureCinderNVMe(ctx, testbed.CinderOptions{TargetIP: "127.0.0.1", SecondaryIPs: []string{"127.0.0.2"}}, testbed.NVMeOld, 4420)
	require.NoError(t, err)
	t.Logf("Cinder (nvmeof) ready in %s", time.Since(start).Round(time.Millisecond))
	for _, format := range []string{testbed.NVMeOld, testbed.NVMeNew} {
		t.Run(format, func(t *testing.T) { nvmeGuestRun(t, g, c, format) })
	}
	t.Run("rdma-md", func(t *testing.T) { nvmeRDMARun(t, g) })
}
