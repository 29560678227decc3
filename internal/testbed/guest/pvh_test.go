package guest

import (
	"encoding/binary"
	"testing"
)

// note lays out one ELF note as the kernel's linker does.
func note(name string, typ uint32, desc []byte) []byte {
	pad := func(b []byte) []byte {
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	n := append([]byte(name), 0)
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(n)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(desc)))
	out = binary.LittleEndian.AppendUint32(out, typ)
	out = append(out, pad(n)...)
	return append(out, pad(append([]byte(nil), desc...))...)
}

func TestHasXenNote(t *testing.T) {
	entry := []byte{0x50, 0x08, 0x00, 0x01, 0, 0, 0, 0}
	tests := []struct {
		name string
		data []byte
		want bool
	}{
		{"after other notes", append(append(note("Xen", 6, []byte("linux\x00")), note("GNU", 3, []byte{1, 2, 3})...), note("Xen", 18, entry)...), true},
		{"only other Xen notes", append(note("Xen", 6, []byte("linux\x00")), note("Xen", 17, []byte{1, 0x88, 0, 0})...), false},
		{"type 18 of another owner", note("GNU", 18, entry), false},
		{"empty", nil, false},
		{"truncated header", note("Xen", 18, entry)[:10], false},
		{"name longer than the data", []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 18, 0, 0, 0, 'X'}, false},
		{"desc longer than the data", append(note("Xen", 6, nil)[:4], 0xff, 0xff, 0xff, 0xff, 6, 0, 0, 0, 'X', 'e', 'n', 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hasXenNote(tt.data, binary.LittleEndian, xenElfnotePhys32Entry); got != tt.want {
				t.Errorf("hasXenNote = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzHasXenNote(f *testing.F) {
	f.Add(note("Xen", 18, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 18, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		hasXenNote(data, binary.LittleEndian, xenElfnotePhys32Entry) // must not panic
	})
}

// The kernel's own vmlinux, when the host has one to extract: found, with
// its PVH entry, and a second call takes it from the cache.
func TestEnsureVmlinux(t *testing.T) {
	k, err := findKernel("/boot", "/lib/modules", "")
	if err != nil {
		t.Skipf("no kernel to boot here: %v", err)
	}
	dir := t.TempDir()
	path, err := ensureVmlinux(t.Context(), dir, k)
	if err != nil {
		t.Skipf("%s holds no vmlinux with a PVH entry: %v", k.Image, err)
	}
	if ok, err := hasPVHEntry(path); err != nil || !ok {
		t.Fatalf("hasPVHEntry(%s) = %v, %v", path, ok, err)
	}
	again, err := ensureVmlinux(t.Context(), dir, k)
	if err != nil || again != path {
		t.Fatalf("second call = %q, %v; want the cached %q", again, err, path)
	}
}
