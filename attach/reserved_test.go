package attach

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/cinderapi"
)

// reserveElsewhere reserves the volume as brick csi's controller does and
// returns the attachment ID.
func reserveElsewhere(t *testing.T, f *fixture) string {
	t.Helper()
	c, err := cinderapi.NewClient(context.Background(), f.fake.ServiceClient(), "")
	require.NoError(t, err)
	id, err := c.Flow().Reserve(context.Background(), volID, "rw")
	require.NoError(t, err)
	return id
}

// TestAttachReservedElsewhere: an attachment reserved by its owner is
// completed, and left to its owner by a failed attach and by a detach.
func TestAttachReservedElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name       string
		connectErr error
		wantStatus string // the volume's status after the attach (and detach)
	}{
		{"attach then detach", nil, "in-use"},
		{"connect fails", errors.New("iscsi login: target unreachable"), "attaching"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "")
			att := reserveElsewhere(t, f)
			f.conn.connectErr = tc.connectErr
			m := f.manager()
			rec, err := m.Attach(context.Background(), AttachOptions{Volume: volID, Attachment: att})
			if tc.connectErr != nil {
				require.ErrorContains(t, err, "target unreachable")
			} else {
				require.NoError(t, err)
				require.Equal(t, att, rec.AttachmentID)
				require.True(t, rec.ExternalAttachment)
				require.NoError(t, m.Detach(context.Background(), DetachOptions{Volume: volID}))
			}
			st, n := f.fake.Status(volID)
			require.Equal(t, tc.wantStatus, st)
			require.Equal(t, 1, n, "the owner's attachment stays")
			require.Zero(t, f.conn.count(), "devices left")
			_, err = m.Record(volID)
			require.ErrorIs(t, err, ErrNoRecord)
		})
	}
}

func TestAttachReservedElsewhereRefused(t *testing.T) {
	for _, tc := range []struct{ name, mv, att, want string }{
		{"not a UUID", "", "x;y", "not a Cinder attachment ID"},
		{"legacy flow", "3.0", "22222222-2222-4222-8222-222222222222", "needs Cinder's v3 attachments flow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.mv)
			_, err := f.manager().Attach(context.Background(), AttachOptions{Volume: volID, Attachment: tc.att})
			require.ErrorContains(t, err, tc.want)
			f.requireClean()
		})
	}
}
