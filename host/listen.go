package host

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ErrSocketBusy means another process answers on a socket brick was to serve.
var ErrSocketBusy = errors.New("another process serves this socket")

// ListenUnix listens on the unix stream socket hostPath and makes it 0600,
// so only root may connect; its directory is created 0755 if missing. A
// socket file a killed process left behind is replaced; one a live process
// still answers on is ErrSocketBusy, and a file that is not a socket is
// refused.
func (f FS) ListenUnix(hostPath string) (net.Listener, error) {
	p := f.Path(hostPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", hostPath, err)
	}
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("listen on %s: %w", hostPath, err)
	case st.Mode()&fs.ModeSocket == 0:
		return nil, fmt.Errorf("listen on %s: exists and is not a socket", hostPath)
	default:
		if c, err := net.DialTimeout("unix", p, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("listen on %s: %w", hostPath, ErrSocketBusy)
		}
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("listen on %s: remove stale socket: %w", hostPath, err)
		}
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", hostPath, err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("listen on %s: %w", hostPath, err)
	}
	return l, nil
}
