package multipath

import (
	"context"
	"fmt"
	"strings"

	"github.com/brick-storage/brick/ident"
)

// WWIDs keeps multipath's wwids file: the WWIDs multipathd may build maps
// for.
type WWIDs struct {
	*deps
}

// WWIDsFile is multipath-tools' list of WWIDs it may build maps for (its
// default wwids_file).
const WWIDsFile = "/etc/multipath/wwids"

const wwidsHeader = "# Multipath wwids, Version : 1.0\n# Maintained by multipath and multipathd; brick adds and forgets the WWIDs of the volumes it attaches.\n#\n# Valid WWIDs:\n"

// Add records the WWID in multipath's wwids file, so multipathd builds
// a map for it even with find_multipaths strict or on. brick appends the
// line under the fcntl lock multipath-tools takes on that file, saving a
// process start; if that fails it runs "multipath -a".
func (w WWIDs) Add(ctx context.Context, wwid string) error {
	if !ident.WWID(wwid) {
		return fmt.Errorf("multipath add wwid %q: invalid WWID", wwid)
	}
	lctx, cancel := context.WithTimeout(ctx, w.opts.CommandTimeout)
	_, err := w.fs.LineFile(WWIDsFile, wwidsHeader).Append(lctx, "/"+wwid+"/")
	cancel()
	if err == nil {
		w.log.Debug("multipath: wwid added", "file", WWIDsFile, "wwid", wwid)
		return nil
	}
	w.log.Debug("multipath: cannot write the wwids file; running multipath -a", "err", err.Error())
	if _, err := w.run(ctx, "multipath", "-a", wwid); err != nil {
		return fmt.Errorf("multipath add wwid %s: %w", wwid, err)
	}
	return nil
}

// Remove forgets the WWID again, so a later unrelated LUN reusing it
// is not grabbed: its line in the wwids file becomes a comment, as
// "multipath -w" does it, under the same lock (that command is the
// fallback). An unknown WWID is success.
func (w WWIDs) Remove(ctx context.Context, wwid string) error {
	if !ident.WWID(wwid) {
		return fmt.Errorf("multipath remove wwid %q: invalid WWID", wwid)
	}
	lctx, cancel := context.WithTimeout(ctx, w.opts.CommandTimeout)
	_, err := w.fs.LineFile(WWIDsFile, wwidsHeader).CommentOut(lctx, "/"+wwid+"/")
	cancel()
	if err == nil {
		w.log.Debug("multipath: wwid forgotten", "file", WWIDsFile, "wwid", wwid)
		return nil
	}
	w.log.Debug("multipath: cannot write the wwids file; running multipath -w", "err", err.Error())
	if _, err := w.run(ctx, "multipath", "-w", wwid); err != nil {
		return fmt.Errorf("multipath remove wwid %s: %w", wwid, err)
	}
	return nil
}

// Known reports whether multipath's wwids file lists the WWID already,
// which saves a write under its lock.
func (w WWIDs) Known(wwid string) bool {
	data, err := w.fs.ReadFile(WWIDsFile)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "/"+wwid+"/" {
			return true
		}
	}
	return false
}
