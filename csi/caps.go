package csi

import (
	"path"
	"strings"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/ident"
)

// Access modes a Cinder volume (not multiattach) serves: one node.
var singleNode = map[csipb.VolumeCapability_AccessMode_Mode]bool{
	csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER:        true,
	csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY:   true,
	csipb.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER: true,
	csipb.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:  true,
}

// filesystems brick formats and mounts for a mount access type.
var filesystems = map[string]bool{"ext4": true, "ext3": true, "xfs": true, "btrfs": true}

// checkCaps refuses an empty list and any capability brick cannot serve.
func checkCaps(caps []*csipb.VolumeCapability) error {
	if len(caps) == 0 {
		return invalid("volume capabilities missing: give at least one (access mode and access type)")
	}
	for _, c := range caps {
		if err := checkCap(c); err != nil {
			return err
		}
	}
	return nil
}

// checkCap refuses a capability brick cannot serve.
func checkCap(c *csipb.VolumeCapability) error {
	if c == nil {
		return invalid("volume capability missing")
	}
	if c.GetAccessMode() == nil || !singleNode[c.GetAccessMode().GetMode()] {
		return invalid("access mode %s: Cinder volumes attach to one node at a time (use a SINGLE_NODE_* mode)", c.GetAccessMode().GetMode())
	}
	switch {
	case c.GetBlock() != nil:
	case c.GetMount() != nil:
		if t := c.GetMount().GetFsType(); t != "" && !filesystems[t] {
			return invalid("fs_type %s: brick formats ext3, ext4, xfs or btrfs", connector.Quote(t))
		}
	default:
		return invalid("access type missing: give block or mount")
	}
	return nil
}

// readOnly reports an access mode that only reads.
func readOnly(c *csipb.VolumeCapability) bool {
	return c.GetAccessMode().GetMode() == csipb.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY
}

// volumeID refuses an empty ID (InvalidArgument) and one that cannot be a
// Cinder volume's (NotFound: no volume has it).
func volumeID(id string) (string, error) {
	if id == "" {
		return "", invalid("volume ID missing")
	}
	if !ident.IsUUID(id) {
		return "", notFound("volume %s: no such volume (Cinder volume IDs are UUIDs)", connector.Quote(id))
	}
	return strings.ToLower(id), nil
}

// checkKubeletDir accepts a clean absolute directory other than "/".
func checkKubeletDir(dir string) error {
	if !path.IsAbs(dir) || path.Clean(dir) != dir || dir == "/" {
		return invalid("kubelet directory %s: give a clean absolute path other than /", connector.Quote(dir))
	}
	return nil
}

// underKubelet refuses a path outside the kubelet directory, or one that
// is not clean: what field names the request's field.
func (d *Driver) underKubelet(field, p string) error {
	switch {
	case p == "":
		return invalid("%s missing", field)
	case strings.ContainsAny(p, "\x00\n\r"):
		return invalid("%s: control characters", field)
	case !path.IsAbs(p) || path.Clean(p) != p:
		return invalid("%s %s: must be a clean absolute path", field, connector.Quote(p))
	case !strings.HasPrefix(p, d.cfg.KubeletDir+"/"):
		return invalid("%s %s: not under the kubelet directory %s (brick csi --kubelet-dir)", field, connector.Quote(p), d.cfg.KubeletDir)
	}
	return nil
}
