package ironicattach

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWriteProgress(t *testing.T) {
	require.Equal(t, "wrote 5 of 20 MiB (25%, 2.5 MiB/s)", WriteProgress(5<<20, 20<<20, 2*time.Second))
	require.Equal(t, "wrote 0 of 1 MiB (50%, 0.5 MiB/s)", WriteProgress(512, 1024, 0))
}
