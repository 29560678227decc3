// Command csikubelet makes the CSI calls kubelet and the sidecars make, in
// their order, against brick csi in a test guest: it starts the controller
// (--mode controller) and the node plugin (--mode node) as two processes,
// plays provisioner, attacher, resizer, snapshotter and kubelet, and prints
// one line per step for test/e2e/csi_test.go:
//
//	STEP <name> ok <seconds>        a step passed
//	STEP <name> FAIL <why>          a step failed (the run stops)
//	CODE <case> <gRPC code>         a bad request's answer
//	TIME <name> <seconds>           a timed call
//	RSS <plugin>-<when> <kB>        a plugin's resident set
//
// It exits 0 when every step passed. Usage (in the guest):
//
//	csikubelet -brick /tmp/brick -work /tmp/csik -cinder http://10.0.2.2:8776/v3 \
//	    -project P -node-args "--multipath --nic eth0" -encrypted-type T
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

type options struct {
	brick, work, kubeletDir, cinder, project, encType, logDir string
	nodeArgs                                                  []string
	rounds                                                    int
}

func main() {
	var o options
	var nodeArgs string
	flag.StringVar(&o.brick, "brick", "/tmp/brick", "the brick binary")
	flag.StringVar(&o.work, "work", "/tmp/csik", "directory for the plugins' sockets")
	flag.StringVar(&o.logDir, "logs", "/brick", "directory for the plugins' logs")
	flag.StringVar(&o.kubeletDir, "kubelet-dir", "/var/lib/kubelet", "kubelet's directory")
	flag.StringVar(&o.cinder, "cinder", "", "Cinder's v3 endpoint without the project")
	flag.StringVar(&o.project, "project", "", "the noauth project")
	flag.StringVar(&o.encType, "encrypted-type", "", "an encrypted Cinder volume type (empty: skip)")
	flag.StringVar(&nodeArgs, "node-args", "", "more arguments of the node plugin, space separated")
	flag.IntVar(&o.rounds, "rounds", 2, "rounds of the NodeStage+NodePublish vs local-attach timing")
	flag.Parse()
	o.nodeArgs = strings.Fields(nodeArgs)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	r := newRun(ctx, o)
	err := r.all()
	r.close()
	if err != nil {
		fmt.Printf("STEP end FAIL %s\n", oneLine(err.Error()))
		os.Exit(1)
	}
	fmt.Println("STEP end ok 0")
}

// all is the whole play, in order; the first failed step ends it.
func (r *run) all() error {
	for _, s := range []struct {
		name string
		fn   func() error
	}{
		{"start", r.start},
		{"provision", r.provision},
		{"two-pods", r.twoPods},
		{"republish", r.republish},
		{"expand", r.expand},
		{"snapshot", r.snapshot},
		{"bad-requests", r.badRequests},
		{"timing", r.timing},
		{"encrypted", r.encrypted},
		{"idle-rss", r.idleRSS},
		{"delete", r.deleteAll},
	} {
		if err := r.step(s.name, s.fn); err != nil {
			return err
		}
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
