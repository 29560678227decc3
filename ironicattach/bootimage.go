package ironicattach

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/host"
	"github.com/brick-storage/brick/rollback"
)

const gib = int64(1) << 30

// ImageOpts make boot-from-volume start from a local disk image: a new
// volume is created, attached to this host, written and detached first.
type ImageOpts struct {
	Path    string // a raw disk image
	SizeGiB int    // the new volume's size
	Name    string // the new volume's name (default brick-boot-NODE)
	// Progress, when set, hears how many bytes are written (after each
	// chunk and once flushed).
	Progress func(done, total int64)
}

// ImageHost is what writing an image needs of Cinder and this host.
type ImageHost interface {
	// CreateVolume makes a volume and waits until it is available.
	CreateVolume(ctx context.Context, name string, sizeGiB int) (*cinderapi.Volume, error)
	// DeleteVolume deletes it and waits until it is gone.
	DeleteVolume(ctx context.Context, id string) error
	// Attach attaches the volume to this host (local-attach, which undoes
	// itself when it fails) and returns its block device.
	Attach(ctx context.Context, volumeID string) (string, error)
	// Detach flushes and detaches it (local-detach).
	Detach(ctx context.Context, volumeID string) error
}

// ImageResult says what was written.
type ImageResult struct {
	VolumeID string
	Device   string
	Bytes    int64
	Write    time.Duration // copy and flush
}

// writeChunk is the copy's unit: big enough for iSCSI, small enough for
// a progress line that moves.
const writeChunk = 4 << 20

// imageMagics are the headers of image formats brick does not unpack.
var imageMagics = []struct {
	magic, name string
}{{"QFI\xfb", "qcow2"}, {"KDMV", "vmdk"}, {"vhdxfile", "vhdx"}, {"conectix", "vhd"}}

// checkImage wants a raw image (a regular file) that fits the volume, and
// returns its size.
func checkImage(img ImageOpts) (int64, error) {
	if img.SizeGiB < 1 {
		return 0, invalid("boot-from-volume", fmt.Sprintf("--size %d: give the new volume's size in GiB (at least 1)", img.SizeGiB))
	}
	f, err := host.OpenInput(img.Path)
	if err != nil {
		return 0, fmt.Errorf("image %s: %w", connector.Quote(img.Path), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("image %s: %w", connector.Quote(img.Path), err)
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return 0, fmt.Errorf("image %s is not a non-empty regular file: %w", connector.Quote(img.Path), ErrNotReady)
	}
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	for _, m := range imageMagics {
		if bytes.HasPrefix(head[:n], []byte(m.magic)) {
			return 0, fmt.Errorf("image %s is %s; brick writes raw images only: convert it first (qemu-img convert -O raw %s IMAGE.raw): %w",
				connector.Quote(img.Path), m.name, img.Path, ErrNotReady)
		}
	}
	if st.Size() > int64(img.SizeGiB)*gib {
		return 0, fmt.Errorf("image %s has %d bytes, more than the %d GiB volume: give a --size of at least %d: %w",
			connector.Quote(img.Path), st.Size(), img.SizeGiB, (st.Size()+gib-1)/gib, ErrNotReady)
	}
	return st.Size(), nil
}

// BootFromImage is BootFromVolume on a new volume holding the image: it
// checks the image and the node first, then creates the volume, attaches
// it here, writes and flushes the image, detaches, and sets the node up.
// Any failure deletes the new volume again (and detaches it first), or
// names the command that does when Cinder refuses.
func (m *Manager) BootFromImage(ctx context.Context, o BootOpts, img ImageOpts, h ImageHost) (*BootResult, *ImageResult, error) {
	m = m.forBoot()
	op := fmt.Sprintf("boot-from-volume node %s --image %s", o.Node, img.Path)
	size, err := checkImage(img)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	node, err := m.bootNode(ctx, o.Node)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	// The new volume does not exist yet: check the node against a stand-in.
	if _, err := m.planBootOn(ctx, node, &cinderapi.Volume{Size: img.SizeGiB, Status: "available"}, o); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	if img.Name == "" {
		img.Name = "brick-boot-" + display(node)
	}
	ir := &ImageResult{Bytes: size}
	var res *BootResult
	j := rollback.Journal{Timeout: m.UndoTimeout, Log: m.Log}
	err = j.Run(ctx, m.imageSteps(img, h, ir, o, &res)...)
	if err == nil {
		return res, ir, nil
	}
	if uerr := j.Rollback(ctx); uerr != nil {
		m.log().Error("boot-from-volume: undo failed", "volume", ir.VolumeID, "err", uerr.Error())
		err = fmt.Errorf("%w (undo also failed: %v; delete the volume with: openstack volume delete %s)", err, uerr, ir.VolumeID)
	}
	return nil, nil, fmt.Errorf("%s: %w", op, err)
}

// imageSteps create, attach, write, detach, then set the node up.
func (m *Manager) imageSteps(img ImageOpts, h ImageHost, ir *ImageResult, o BootOpts, res **BootResult) []rollback.Step {
	var attached bool
	return []rollback.Step{
		{Name: "create volume", UndoName: "delete volume",
			Do: func(ctx context.Context) error {
				v, err := h.CreateVolume(ctx, img.Name, img.SizeGiB)
				if v != nil {
					ir.VolumeID = v.ID
				}
				return err
			},
			Undo: func(ctx context.Context) error {
				if ir.VolumeID == "" {
					return nil
				}
				return h.DeleteVolume(ctx, ir.VolumeID)
			}},
		{Name: "attach volume", UndoName: "detach volume",
			Do: func(ctx context.Context) (err error) {
				ir.Device, err = h.Attach(ctx, ir.VolumeID)
				attached = err == nil
				return err
			},
			Undo: func(ctx context.Context) error {
				if !attached {
					return nil
				}
				return h.Detach(ctx, ir.VolumeID)
			}},
		{Name: "write image", Do: func(ctx context.Context) error {
			start := time.Now()
			err := writeImage(ctx, img, ir.Device)
			ir.Write = time.Since(start)
			return err
		}},
		{Name: "detach volume", Do: func(ctx context.Context) error {
			if err := h.Detach(ctx, ir.VolumeID); err != nil {
				return err
			}
			attached = false
			return nil
		}},
		{Name: "set up node", Do: func(ctx context.Context) (err error) {
			o.Volume = ir.VolumeID
			*res, err = m.BootFromVolume(ctx, o)
			return err
		}},
	}
}

// writeImage copies the image onto dev and flushes it to the volume.
func writeImage(ctx context.Context, img ImageOpts, dev string) error {
	src, err := host.OpenInput(img.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	// O_EXCL on a block device: refused while anything has it mounted.
	dst, err := host.OpenDeviceExclusive(dev)
	if err != nil {
		return fmt.Errorf("open %s: %w", dev, err)
	}
	werr := copyImage(ctx, dst, src, st.Size(), img.Progress)
	if werr == nil {
		if werr = dst.Sync(); werr != nil {
			werr = fmt.Errorf("flush %s: %w", dev, werr)
		}
	}
	if cerr := dst.Close(); werr == nil && cerr != nil {
		werr = fmt.Errorf("close %s: %w", dev, cerr)
	}
	if werr == nil && img.Progress != nil {
		img.Progress(st.Size(), st.Size())
	}
	return werr
}

// copyImage copies total bytes in chunks, checking ctx between them.
func copyImage(ctx context.Context, dst io.Writer, src io.Reader, total int64, progress func(done, total int64)) error {
	buf := make([]byte, writeChunk)
	var done int64
	for done < total {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := io.ReadFull(src, buf[:min(int64(len(buf)), total-done)])
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return fmt.Errorf("write at byte %d: %w", done, werr)
			}
			done += int64(n)
			if progress != nil && done < total {
				progress(done, total)
			}
		}
		switch {
		case n == 0 && errors.Is(err, io.EOF):
			return fmt.Errorf("read the image: it shrank to %d bytes while being written", done)
		case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("read the image at byte %d: %w", done, err)
		}
	}
	return nil
}
