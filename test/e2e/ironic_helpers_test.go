//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/brick-storage/brick/internal/testbed"
	"github.com/brick-storage/brick/ironicapi"
)

// ironicBed is a real Ironic (test/ironic/up.sh) the Ironic tests share.
type ironicBed struct {
	endpoint string
	maxLimit int // [api] max_limit, 0 when unknown
}

// ironicMaxLimit is the [api] max_limit every Ironic test asks for: small,
// so that a node's lists span pages (one setting for all, so the shared
// Ironic is not restarted between them).
const ironicMaxLimit = 3

// realIronic returns the test bed's real Ironic (testbed.EnsureIronic),
// started with a small max_limit.
func realIronic(t *testing.T) ironicBed {
	t.Helper()
	ir := needIronic(t, testbed.IronicOptions{MaxLimit: ironicMaxLimit})
	return ironicBed{endpoint: ir.Endpoint, maxLimit: ir.MaxLimit}
}

// countingTransport counts HTTP requests (pages fetched).
type countingTransport struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// client returns a noauth client for the bed and its request counter.
func (b ironicBed) client(t *testing.T) (*gophercloud.ServiceClient, *countingTransport) {
	t.Helper()
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: b.endpoint})
	if err != nil {
		t.Fatal(err)
	}
	ct := &countingTransport{next: http.DefaultTransport}
	sc.HTTPClient = http.Client{Transport: ct, Timeout: 30 * time.Second}
	return sc, ct
}

// newNode creates a fake-hardware node with a unique name; power is
// "power off", "power on" or "" (never set, as Ironic leaves new nodes).
func newNode(t *testing.T, ctx context.Context, sc *gophercloud.ServiceClient, prefix, power string) nodes.Node {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	c := *sc
	c.Microversion = "1.32"
	var n nodes.Node
	_, err := c.Post(ctx, c.ServiceURL("nodes"), map[string]any{"name": name, "driver": "fake-hardware"}, &n, &gophercloud.RequestOpts{OkCodes: []int{201}})
	if err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	t.Cleanup(func() {
		// Deleting the node deletes its connectors and targets, so IDs
		// do not pile up in a long-lived test bed Ironic.
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = c.Delete(cctx, c.ServiceURL("nodes", n.UUID), nil)
	})
	if power != "" {
		setPower(t, ctx, sc, n.UUID, power)
	}
	n.PowerState = power
	return n
}

// setPower changes a fake node's power state and waits until Ironic shows it.
func setPower(t *testing.T, ctx context.Context, sc *gophercloud.ServiceClient, nodeUUID, power string) {
	t.Helper()
	opts := nodes.PowerStateOpts{Target: nodes.TargetPowerState(power)}
	if err := nodes.ChangePowerState(ctx, sc, nodeUUID, opts).ExtractErr(); err != nil {
		t.Fatalf("power %s: %v", power, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := ironicapi.GetNode(ctx, sc, nodeUUID).Extract()
		if err != nil {
			t.Fatal(err)
		}
		if n.PowerState == power && n.TargetPowerState == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s still %q (target %q) after 30s", nodeUUID, n.PowerState, n.TargetPowerState)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond): // test-only poll of an async server-side change
		}
	}
}
