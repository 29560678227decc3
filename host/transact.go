package host

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// WriteRead writes request to a control device and reads the reply from the
// same open file, which is how /dev/nvme-fabrics answers a connect
// ("instance=N,cntlid=M"). Both calls block in the kernel until it has
// answered; callers that need a deadline run it in a goroutine.
func (f FS) WriteRead(hostPath string, request []byte) ([]byte, error) {
	file, err := os.OpenFile(f.Path(hostPath), os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if _, err := file.Write(request); err != nil {
		return nil, fmt.Errorf("write %s: %w", hostPath, err)
	}
	buf := make([]byte, 4096)
	n, err := file.Read(buf)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", hostPath, err)
	}
	return buf[:n], nil
}
