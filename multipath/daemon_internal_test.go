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
