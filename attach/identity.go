package attach

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/scsi"
)

// wwidKeys are the connection info keys some Cinder drivers (Pure: "wwn")
// use for the volume's SCSI WWID.
var wwidKeys = []string{"wwn", "scsi_wwn"}

// checkUnrecorded guards a detach brick has no record of: it acts on the
// LUN Cinder's connection info names today, which may hold another volume
// (a LUN number reused on the array, a stale session). For SCSI protocols
// each device found there must carry the WWID the connection info gives;
// when it gives none or another one, only force goes on (with a warning).
// Other protocols name the volume itself (image, file, NQN and uuid).
func (m *Manager) checkUnrecorded(ctx context.Context, rec *Record, force bool) error {
	info := *rec.ConnectionInfo
	t := strings.ToLower(info.DriverVolumeType)
	if t != "iscsi" && t != "iser" && t != "fibre_channel" {
		return nil
	}
	c, err := m.Connectors.For(t)
	if err != nil {
		return err
	}
	paths, err := c.DevicePaths(ctx, info)
	if err != nil {
		return fmt.Errorf("find the device to check its WWID: %w", err)
	}
	want, key := expectedWWID(info)
	var problems []string
	for _, p := range paths {
		got, err := deviceWWID(m.Host, p)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", p, err))
		case want == "" || got != want:
			problems = append(problems, fmt.Sprintf("%s has WWID %s", p, got))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	said := "gives no WWID to check it against"
	if want != "" {
		said = fmt.Sprintf("says the volume's WWID is %s (%s)", want, key)
	}
	msg := fmt.Sprintf("brick has no record of this attachment, and at the LUN Cinder names %s, but Cinder's connection info %s: that LUN may hold another volume",
		strings.Join(problems, ", "), said)
	if force {
		m.Host.Log.Warn("detaching unverified device (--force)", "volume", rec.VolumeID, "reason", msg)
		return nil
	}
	return fmt.Errorf("%s; if it is this volume, run again with --force", msg)
}

// expectedWWID is the WWID the connection info gives, in scsi_id's form,
// and the key it came from.
func expectedWWID(info connector.ConnectionInfo) (string, string) {
	for _, k := range wwidKeys {
		v, ok := info.Data[k].(string)
		if !ok || v == "" {
			continue
		}
		v = strings.ToLower(strings.TrimSpace(v))
		if id, ok := scsi.ParseSysfsWWID(v); ok {
			return id, k
		}
		return v, k
	}
	return "", ""
}

// deviceWWID reads a device's WWID: a multipath map's from its dm uuid
// ("mpath-<wwid>"), a disk's as scsi_id would print it.
func deviceWWID(h *host.Host, dev string) (string, error) {
	name := path.Base(dev)
	if strings.HasPrefix(name, "dm-") {
		uuid, err := h.FS.ReadString("/sys/block/" + name + "/dm/uuid")
		if err != nil {
			return "", err
		}
		if id, ok := strings.CutPrefix(uuid, "mpath-"); ok {
			return strings.ToLower(id), nil
		}
		return "", fmt.Errorf("not a multipath map (dm uuid %s)", connector.Quote(uuid))
	}
	id, err := scsi.New(h, scsi.Options{}).WWID(name)
	return strings.ToLower(id), err
}
