package iscsi

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/brick-storage/brick/host"
)

// nodes keeps open-iscsi's node and discovery records: brick makes and
// edits them itself, under iscsiadm's lock, and removes them again.
type nodes struct {
	h            *host.Host
	log          *slog.Logger
	adm          iscsiadm
	loginTimeout time.Duration
}

// timeoutSecs is the login timeout as the records' whole seconds.
func (n nodes) timeoutSecs() int { return int((n.loginTimeout + time.Second - 1) / time.Second) }

// prepare makes sure the node record exists and carries brick's settings
// and the CHAP credentials (see record.go for why a file edit); created
// says it made the record.
func (n nodes) prepare(ctx context.Context, info *Info, t Target) (created bool, err error) {
	files, err := recordFiles(n.h.FS, t.IQN, t.Portal, info.Iface)
	if err != nil {
		return false, err
	}
	if len(files) == 0 {
		if err := n.adm.newNode(ctx, t.IQN, t.Portal, info.Iface); err != nil {
			return false, err
		}
		created = true
		if files, err = recordFiles(n.h.FS, t.IQN, t.Portal, info.Iface); err != nil {
			return created, err
		}
		if len(files) == 0 {
			return created, fmt.Errorf("iscsi node record %s: created, but not found under %s", t, strings.Join(nodeDBs(), " or "))
		}
	}
	for _, f := range files {
		if err := n.adm.editRecordLocked(ctx, f, nodeSettings(info.Auth, info.Iface, n.timeoutSecs())); err != nil {
			return created, fmt.Errorf("iscsi %s: %w", t, err)
		}
	}
	return created, nil
}

// discover asks portal p for its targets (SendTargets), with discovery
// CHAP when auth is given.
func (n nodes) discover(ctx context.Context, p Portal, iface string, auth *CHAP) ([]DiscoveredTarget, error) {
	if auth == nil {
		return n.adm.discover(ctx, p, iface, false)
	}
	// Discovery CHAP lives in the discovery record, written like node
	// records so the password stays off the command line; the record is
	// removed again afterwards so the password does not stay on disk.
	if err := n.adm.newDiscovery(ctx, p, iface); err != nil {
		return nil, err
	}
	defer func() {
		if err := n.adm.deleteDiscovery(context.WithoutCancel(ctx), p, iface); err != nil {
			n.log.Warn("iscsi: remove discovery record", "portal", p.String(), "err", err.Error())
		}
	}()
	f, ok := discoveryRecord(n.h.FS, p)
	if !ok {
		return nil, fmt.Errorf("iscsi discovery record %s: created, but not found", p)
	}
	if err := n.adm.editRecordLocked(ctx, f, discoverySettings(auth, n.timeoutSecs())); err != nil {
		return nil, err
	}
	return n.adm.discover(ctx, p, iface, true)
}

// delete removes the node record of iqn at p: brick removes the file
// itself (see removeRecord) and runs "iscsiadm -o delete" only when that
// fails. None is fine.
func (n nodes) delete(ctx context.Context, iqn string, p Portal, iface string) error {
	// Exclusive, like iscsiadm -o delete (see nodeDBLock); released before
	// the fallback, which takes it again.
	unlock, err := n.h.Locks.Lock(ctx, nodeDBLock)
	if err != nil {
		return fmt.Errorf("iscsi delete node record %s@%s: %w", iqn, p, err)
	}
	removed := removeRecord(n.h.FS, iqn, p, iface)
	unlock()
	if removed {
		n.log.Debug("iscsi: node record removed", "target", iqn, "portal", p.String())
		return nil
	}
	return n.adm.deleteNode(ctx, iqn, p, iface)
}

// portalProbe checks that a portal accepts a TCP connection before a
// login waits on it (Options.PortalCheck); nil check turns it off.
type portalProbe struct {
	check        func(ctx context.Context, addr string) error
	fs           host.FS
	loginTimeout time.Duration
}

// once reports whether the portal accepts a TCP connection now, within
// a second at most; without a PortalCheck, or over iSER (whose targets
// listen through RDMA CM, not necessarily on TCP), every portal counts as
// answering.
func (p portalProbe) once(ctx context.Context, t Target, iface string) bool {
	if p.check == nil || iface == IfaceISER {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, min(p.loginTimeout, time.Second))
	defer cancel()
	return p.check(ctx, t.Portal.String()) == nil
}

// wait waits, within the login timeout, until the portal accepts a
// TCP connection (see Options.PortalCheck).
func (p portalProbe) wait(ctx context.Context, t Target, iface string) error {
	if p.check == nil || iface == IfaceISER {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.loginTimeout)
	defer cancel()
	var last error
	err := p.fs.WaitFor(ctx, nil, host.Backoff{Min: 250 * time.Millisecond, Max: time.Second}, func() (bool, error) {
		last = p.check(ctx, t.Portal.String())
		return last == nil, nil
	})
	if err == nil {
		return nil
	}
	if last != nil {
		err = last
	}
	return fmt.Errorf("iscsi login %s: portal accepted no connection within the login timeout (%s): %w", t, p.loginTimeout, err)
}
