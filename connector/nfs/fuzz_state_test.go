package nfs

import (
	"testing"

	"github.com/brick-storage/brick/host/hosttest"
)

// FuzzReadState feeds arbitrary share state files (brick's own, but on
// disk and so possibly damaged) to the reader: no panic, and a state read
// always has a user map.
func FuzzReadState(f *testing.F) {
	f.Add([]byte(`{"users":{"volume-1":{"file":"volume-1","loop":"/dev/loop0"}},"version":"4.2"}`))
	f.Add([]byte(`{"users":null}`))
	f.Add([]byte(`{"users":{"x":7}}`))
	root := f.TempDir()
	// Not hosttest.New(f, ...): its logger writes to f, which a fuzz
	// function may not use.
	h := hosttest.NewQuiet(root)
	c := New(h, Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		hosttest.WriteFile(t, root, c.state.path("share1"), string(data))
		st, err := c.state.read("share1")
		if err == nil && st.Users == nil {
			t.Fatal("nil users")
		}
		if err == nil {
			_ = st.userNames()
		}
	})
}
