package host

import (
	"errors"
	"io/fs"
	"os"
)

// Remove deletes a file or an empty directory. One that does not exist is
// success; a directory that is not empty is an error.
func (f FS) Remove(hostPath string) error {
	if err := os.Remove(f.Path(hostPath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
