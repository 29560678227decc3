// Package reconcile compares what brick recorded, what Cinder says is
// attached to this host and what the kernel holds (iSCSI sessions, SCSI
// disks, multipath maps, dm-crypt, NVMe controllers, rbd maps, NFS mounts),
// classifies each volume and each stray object as healthy, degraded,
// orphaned, missing or interrupted, and repairs them on request through
// the attach use case (the same code local-attach, local-detach and
// cleanup run). Storage that belongs to no Cinder volume is only reported
// as left alone.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
)

// Statuses of a finding.
const (
	Healthy     = "healthy"     // attached in Cinder, every path and device here
	Degraded    = "degraded"    // attached, some paths lost
	Orphaned    = "orphaned"    // device or session of a volume not attached to this host
	Missing     = "missing"     // attached in Cinder, no device here
	Interrupted = "interrupted" // a local-attach or local-detach that did not finish
	Unrecorded  = "unrecorded"  // attached here in Cinder and present, but brick has no record
	LeftAlone   = "left-alone"  // storage of no Cinder volume: never touched
	Unknown     = "unknown"     // Cinder could not be asked
)

// Finding is one line of the report: a volume brick knows, or a kernel
// object no record claims.
type Finding struct {
	Status   string   `json:"status"`
	VolumeID string   `json:"volume_id,omitempty"`
	Kind     string   `json:"kind"`   // attachment, iscsi-target, map, nvme, rbd, nfs
	Object   string   `json:"object"` // device, map or target on this host
	Paths    []string `json:"paths,omitempty"`
	Detail   string   `json:"detail,omitempty"`
	Persist  bool     `json:"persist,omitempty"`
	// Repair is what --apply does for it ("" nothing).
	Repair string `json:"repair,omitempty"`
	// Result is what --apply did: "done", "refused: ..." or "failed: ...".
	Result string `json:"result,omitempty"`

	fix   func(context.Context) error
	order int // repairs run by order: cleanup, orphans, reconnects
}

// Report is the outcome of Check (and Apply).
type Report struct {
	Findings []Finding `json:"findings"`
	// Elapsed is the whole check; CinderTime the part spent waiting for
	// Cinder.
	Elapsed    time.Duration `json:"-"`
	CinderTime time.Duration `json:"-"`
	// Warnings are unreadable records and the like.
	Warnings []string `json:"warnings,omitempty"`
}

// Healthy reports whether every finding is healthy or left alone.
func (r *Report) Healthy() bool {
	for _, f := range r.Findings {
		if f.Status != Healthy && f.Status != LeftAlone {
			return false
		}
	}
	return true
}

// Attach is what reconcile needs of *attach.Manager.
type Attach interface {
	Records() ([]*attach.Record, []error)
	Reconnect(ctx context.Context, volumeID string) (*attach.Record, error)
	Suspend(ctx context.Context, volumeID string, o attach.SuspendOptions) error
	Cleanup(ctx context.Context, ref string, force bool) ([]attach.CleanupResult, error)
}

// Cinder is what reconcile asks Cinder.
type Cinder interface {
	Volume(ctx context.Context, id string) (*cinderapi.Volume, error)
}

// Reconciler checks and repairs one host.
type Reconciler struct {
	Host       *host.Host
	Cinder     Cinder
	Attach     Attach
	Connectors attach.Connectors
	// HostName is this host's name as Cinder's attachments carry it.
	HostName string
}

// Check takes the inventory and classifies everything; it changes nothing.
func (r *Reconciler) Check(ctx context.Context) (*Report, error) {
	start := time.Now()
	inv, err := ReadInventory(r.Host)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	c := &check{r: r, inv: inv, claims: newClaims(), cinder: timedCinder{c: r.Cinder, volumes: map[string]*volumeState{}}}
	recs, errs := r.Attach.Records()
	for _, e := range errs {
		c.rep.Warnings = append(c.rep.Warnings, e.Error())
	}
	for _, rec := range recs {
		c.record(ctx, rec)
	}
	c.strays(ctx)
	c.rep.Elapsed = time.Since(start)
	c.rep.CinderTime = c.cinder.spent
	return &c.rep, nil
}

// Apply runs the repairs of a report's findings, in order: unfinished
// operations first (cleanup), then orphans, then reconnects. Each result
// is written into the finding; the first error is returned.
func (r *Reconciler) Apply(ctx context.Context, rep *Report) error {
	idx := make([]int, 0, len(rep.Findings))
	for i := range rep.Findings {
		if rep.Findings[i].fix != nil {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return rep.Findings[idx[a]].order < rep.Findings[idx[b]].order })
	var first error
	for _, i := range idx {
		f := &rep.Findings[i]
		err := f.fix(ctx)
		switch {
		case err == nil:
			f.Result = "done"
		case errors.Is(err, attach.ErrInUse):
			f.Result = "refused: " + err.Error()
		default:
			f.Result = "failed: " + err.Error()
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// volumeState is what Cinder says of one volume for this host.
type volumeState struct {
	known    bool // Cinder has the volume
	attached bool // it has an attachment for this host
	err      error
}

// timedCinder asks Cinder once per volume and adds up the time spent.
type timedCinder struct {
	c       Cinder
	volumes map[string]*volumeState
	spent   time.Duration
}

func (t *timedCinder) state(ctx context.Context, id, hostName string) *volumeState {
	if s, ok := t.volumes[id]; ok {
		return s
	}
	s := &volumeState{}
	t.volumes[id] = s
	if t.c == nil {
		s.err = errors.New("no Cinder client")
		return s
	}
	start := time.Now()
	vol, err := t.c.Volume(ctx, id)
	t.spent += time.Since(start)
	switch {
	case errors.Is(err, apierr.ErrNotFound):
	case err != nil:
		s.err = err
	default:
		s.known = true
		for _, a := range vol.Attachments {
			if a.HostName == hostName {
				s.attached = true
			}
		}
	}
	return s
}

// connector returns the connector of a record's protocol.
func (r *Reconciler) connector(info *connector.ConnectionInfo) (connector.Connector, error) {
	if info == nil {
		return nil, errors.New("the record has no connection info")
	}
	return r.Connectors.For(info.DriverVolumeType)
}
