package multipath

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFrame(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writeFrame(&b, "add path /dev/sdb"))
	raw := b.Bytes()
	require.Equal(t, uint64(len("add path /dev/sdb")+1), binary.NativeEndian.Uint64(raw[:8]), "length counts the NUL")
	require.Equal(t, "add path /dev/sdb\x00", string(raw[8:]))

	// multipathd's reply: "ok\n" and a NUL.
	b.Reset()
	var hdr [8]byte
	binary.NativeEndian.PutUint64(hdr[:], 4)
	b.Write(hdr[:])
	b.WriteString("ok\n\x00")
	got, err := readFrame(&b)
	require.NoError(t, err)
	require.Equal(t, "ok", got)

	b.Reset()
	binary.NativeEndian.PutUint64(hdr[:], maxReply+1)
	b.Write(hdr[:])
	_, err = readFrame(&b)
	require.ErrorContains(t, err, "limit")

	b.Reset()
	binary.NativeEndian.PutUint64(hdr[:], 10)
	b.Write(hdr[:])
	b.WriteString("short")
	_, err = readFrame(&b)
	require.Error(t, err, "a cut reply is an error")
}

// FuzzReadFrame: a reply from the socket is bytes from another process;
// whatever they are, readFrame returns an error or a string no longer than
// the frame, and never allocates past maxReply.
func FuzzReadFrame(f *testing.F) {
	var ok bytes.Buffer
	_ = writeFrame(&ok, "ok\n")
	f.Add(ok.Bytes())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readFrame(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(data) < 8 || len(got) > len(data)-8 {
			t.Fatalf("reply %q longer than its frame of %d bytes", got, len(data))
		}
		// A message written by writeFrame reads back the same.
		var b bytes.Buffer
		if err := writeFrame(&b, got); err != nil {
			t.Fatal(err)
		}
		again, err := readFrame(&b)
		if err != nil || again != got {
			t.Fatalf("round trip of %q: %q, %v", got, again, err)
		}
	})
}
