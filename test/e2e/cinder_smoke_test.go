//go:build e2e

package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/testbed"
)

// TestCinderSmoke proves the test bed's Cinder works end to end on the
// host: a volume is created and becomes available, its backing file exists
// with the volume's size, and delete removes both.
func TestCinderSmoke(t *testing.T) {
	lane(t, laneServices)
	// Any running test bed Cinder will do: this test does not log in to
	// the target, so it neither restarts nor waits for one that another
	// test process uses with other portals.
	c := needCinder(t, testbed.CinderOptions{AcceptRunning: true})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	start := time.Now()
	vol, err := c.CreateVolume(ctx, "brick-e2e-cinder-smoke", 1)
	require.NoError(t, err)
	t.Logf("volume %s available in %s", vol.ID, time.Since(start).Round(time.Millisecond))
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			_ = c.DeleteVolume(context.Background(), vol.ID)
		}
	})
	assert.Equal(t, 1, vol.Size)
	assert.Equal(t, "brick-e2e-cinder-smoke", vol.Name)

	fi, err := os.Stat(c.BackingFile(vol.ID))
	require.NoError(t, err, "backing file of an available volume")
	assert.Equal(t, int64(1<<30), fi.Size(), "backing file size is the volume size")
	assert.True(t, fi.Mode().IsRegular())

	start = time.Now()
	require.NoError(t, c.DeleteVolume(ctx, vol.ID))
	deleted = true
	t.Logf("volume deleted in %s", time.Since(start).Round(time.Millisecond))
	_, err = os.Stat(c.BackingFile(vol.ID))
	assert.True(t, os.IsNotExist(err), "backing file must be gone after delete, stat says %v", err)

	_, err = c.GetVolume(ctx, vol.ID)
	assert.Equal(t, 404, testbed.StatusOf(err))
}
