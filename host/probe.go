package host

import (
	"context"
	"fmt"
	"net"
)

// ProbeTCP opens a TCP connection to addr ("host:port", "[v6]:port") and
// closes it at once: whether anything accepts connections there now. ctx
// bounds the attempt. It sends no data.
func ProbeTCP(ctx context.Context, addr string) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", addr, err)
	}
	return conn.Close()
}
