package host

import (
	"errors"
	"io/fs"
)

// ReadEntries describes the entries of directory dir (a sysfs class, say)
// whose names match accepts, in name order, each with read; an entry read
// says false for (gone while being read, or not one to describe) is left
// out. A missing dir has none.
func ReadEntries[T any](f FS, dir string, match func(name string) bool, read func(name string) (T, bool)) ([]T, error) {
	entries, err := f.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []T
	for _, e := range entries {
		if !match(e.Name()) {
			continue
		}
		if v, ok := read(e.Name()); ok {
			out = append(out, v)
		}
	}
	return out, nil
}
