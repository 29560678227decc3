package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

func (r *run) provision() error {
	v, err := r.create("pvc-csikubelet-main", nil, nil)
	if err != nil {
		return err
	}
	r.vol = v
	fmt.Printf("VOLUME main %s\n", v.id)
	return r.cinderStatus(v.id, "available")
}

// twoPods: one staging, two pods' target paths, a write through the first
// seen through the second, then the whole teardown.
func (r *run) twoPods() error {
	v := r.vol
	if _, err := timed("first-stage", func() error { return r.attach(v) }); err != nil {
		return err
	}
	for i := range v.targets {
		if err := r.publish(v, i); err != nil {
			return err
		}
	}
	if err := r.writeData(v.targets[0]); err != nil {
		return err
	}
	if err := r.checkData(v.targets[1]); err != nil {
		return fmt.Errorf("the second pod: %w", err)
	}
	return r.teardown(v)
}

// republish: after the full teardown, stage again; the node plugin dies
// (-9) between NodeStage and NodePublish and, once restarted, knows the
// volume from brick's records: the publish completes and the data is
// still there. The volume stays published for expand.
func (r *run) republish() error {
	v := r.vol
	if err := r.attach(v); err != nil {
		return err
	}
	if err := r.node.kill(); err != nil {
		return fmt.Errorf("kill -9 the node plugin: %w", err)
	}
	if err := r.node.start(r.ctx); err != nil {
		return fmt.Errorf("restart the node plugin: %w", err)
	}
	fmt.Printf("TIME restart-node %.3f\n", r.node.started.Seconds())
	if err := r.publish(v, 0); err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	return r.checkData(v.targets[0])
}

// expand grows the mounted volume online (resizer, then kubelet) and
// checks that the filesystem grew; the volume stays published.
func (r *run) expand() error {
	v := r.vol
	before, err := fsBytes(v.targets[0])
	if err != nil {
		return err
	}
	ce, err := r.cc.ControllerExpandVolume(r.ctx, &csipb.ControllerExpandVolumeRequest{VolumeId: v.id,
		CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: mountCap()})
	if err != nil {
		return fmt.Errorf("ControllerExpandVolume: %w", err)
	}
	if ce.GetNodeExpansionRequired() {
		if _, err := r.nc.NodeExpandVolume(r.ctx, &csipb.NodeExpandVolumeRequest{VolumeId: v.id, VolumePath: v.targets[0],
			StagingTargetPath: v.staging, CapacityRange: &csipb.CapacityRange{RequiredBytes: 2 * gib}, VolumeCapability: mountCap()}); err != nil {
			return fmt.Errorf("NodeExpandVolume: %w", err)
		}
	}
	after, err := fsBytes(v.targets[0])
	if err != nil {
		return err
	}
	fmt.Printf("DF expand %d %d\n", before, after)
	if after < before+gib*9/10 {
		return fmt.Errorf("the filesystem grew from %d to %d bytes, not by 1 GiB", before, after)
	}
	return r.checkData(v.targets[0])
}

func fsBytes(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks) * st.Bsize, nil
}

// snapshot: a snapshot of the published volume, a new volume from it,
// staged and published: the data is there.
func (r *run) snapshot() error {
	s, err := r.cc.CreateSnapshot(r.ctx, &csipb.CreateSnapshotRequest{SourceVolumeId: r.vol.id, Name: "snap-csikubelet"})
	if err != nil {
		return fmt.Errorf("CreateSnapshot: %w", err)
	}
	id := s.GetSnapshot().GetSnapshotId()
	r.snaps = append(r.snaps, id)
	for !s.GetSnapshot().GetReadyToUse() { // the snapshotter asks again until ready
		time.Sleep(time.Second)
		if s, err = r.cc.CreateSnapshot(r.ctx, &csipb.CreateSnapshotRequest{SourceVolumeId: r.vol.id, Name: "snap-csikubelet"}); err != nil {
			return fmt.Errorf("CreateSnapshot again: %w", err)
		}
	}
	if err := r.teardown(r.vol); err != nil {
		return err
	}
	nv, err := r.create("pvc-csikubelet-restored", nil, &csipb.VolumeContentSource{
		Type: &csipb.VolumeContentSource_Snapshot{Snapshot: &csipb.VolumeContentSource_SnapshotSource{SnapshotId: id}}})
	if err != nil {
		return err
	}
	if err := r.attach(nv); err != nil {
		return err
	}
	if err := r.publish(nv, 0); err != nil {
		return err
	}
	if err := r.checkData(nv.targets[0]); err != nil {
		return fmt.Errorf("the volume from the snapshot: %w", err)
	}
	return r.teardown(nv)
}

// timing: NodeStage+NodePublish against brick local-attach --mountpoint of
// the same volume, interleaved, rounds times.
func (r *run) timing() error {
	v := r.vol
	la := filepath.Join(r.o.work, "local-attach")
	for i := 1; i <= r.o.rounds; i++ {
		pub, err := r.cc.ControllerPublishVolume(r.ctx, &csipb.ControllerPublishVolumeRequest{VolumeId: v.id, NodeId: r.nodeID, VolumeCapability: mountCap()})
		if err != nil {
			return err
		}
		v.pub = pub.GetPublishContext()
		if _, err := timed(fmt.Sprintf("stage-publish-%d", i), func() error {
			if _, err := timed(fmt.Sprintf("stage-%d", i), func() error { return r.stage(v) }); err != nil {
				return err
			}
			return r.publish(v, 0)
		}); err != nil {
			return err
		}
		if _, err := timed(fmt.Sprintf("teardown-%d", i), func() error { return r.teardown(v) }); err != nil {
			return err
		}
		if _, err := timed(fmt.Sprintf("local-attach-%d", i), func() error {
			return r.brick("local-attach", v.id, "--mountpoint", la)
		}); err != nil {
			return err
		}
		if err := r.checkData(la); err != nil {
			return fmt.Errorf("local-attach: %w", err)
		}
		if _, err := timed(fmt.Sprintf("local-detach-%d", i), func() error { return r.detach(v.id) }); err != nil {
			return err
		}
	}
	return nil
}

// brick runs a brick command with the node plugin's volume flags.
func (r *run) brick(args ...string) error {
	argv := append(args, volumeFlags(r.o.nodeArgs)...)
	out, err := exec.CommandContext(r.ctx, r.o.brick, argv...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("brick %s: %w: %s", strings.Join(args, " "), err, oneLine(string(out)))
	}
	return nil
}

// detach runs brick local-detach: the record holds what the attach used.
func (r *run) detach(id string) error {
	out, err := exec.CommandContext(r.ctx, r.o.brick, "local-detach", id).CombinedOutput()
	if err != nil {
		return fmt.Errorf("brick local-detach %s: %w: %s", id, err, oneLine(string(out)))
	}
	return nil
}

// volumeFlags are the node arguments local-attach takes too (not the
// node-only ones).
func volumeFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "--node-id") || strings.HasPrefix(a, "--availability-zone") || strings.HasPrefix(a, "--max-volumes") {
			if !strings.Contains(a, "=") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// encrypted: a volume of an encrypted type, staged on dm-crypt, written,
// torn down, staged again: the data is there.
func (r *run) encrypted() error {
	if r.o.encType == "" {
		fmt.Println("SKIP encrypted no -encrypted-type")
		return nil
	}
	v, err := r.create("pvc-csikubelet-luks", map[string]string{"type": r.o.encType}, nil)
	if err != nil {
		return err
	}
	fmt.Printf("VOLUME luks %s\n", v.id)
	for round := 0; round < 2; round++ {
		if err := r.attach(v); err != nil {
			return err
		}
		if err := r.publish(v, 0); err != nil {
			return err
		}
		src := mountSource(v.staging)
		fmt.Printf("LUKS %d %s %s\n", round, src, dmUUID(src))
		if !strings.HasPrefix(dmUUID(src), "CRYPT-") {
			return fmt.Errorf("the staging mount's device %s is not dm-crypt", src)
		}
		check := r.checkData
		if round == 0 {
			check = r.writeData
		}
		if err := check(v.targets[0]); err != nil {
			return err
		}
		if err := r.teardown(v); err != nil {
			return err
		}
	}
	return nil
}

// dmUUID is the dm uuid of a device path (empty when it is no dm device).
func dmUUID(dev string) string {
	real, err := filepath.EvalSymlinks(dev)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join("/sys/class/block", filepath.Base(real), "dm/uuid"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (r *run) idleRSS() error {
	time.Sleep(2 * time.Second)
	return errors.Join(r.rss(r.ctrl, "idle"), r.rss(r.node, "idle"))
}

// deleteAll: the provisioner's DeleteVolume and the snapshotter's
// DeleteSnapshot for everything made; Cinder then has none of it.
func (r *run) deleteAll() error {
	var errs []error
	for _, s := range r.snaps {
		if _, err := r.cc.DeleteSnapshot(r.ctx, &csipb.DeleteSnapshotRequest{SnapshotId: s}); err != nil {
			errs = append(errs, fmt.Errorf("DeleteSnapshot %s: %w", s, err))
		}
	}
	for _, v := range r.made {
		if _, err := r.cc.DeleteVolume(r.ctx, &csipb.DeleteVolumeRequest{VolumeId: v.id}); err != nil {
			errs = append(errs, fmt.Errorf("DeleteVolume %s: %w", v.id, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	left, err := r.cinderCount()
	if err != nil {
		return err
	}
	fmt.Printf("LEFT cinder %s\n", left)
	ids := make([]string, 0, len(r.made))
	for _, v := range r.made {
		ids = append(ids, v.id)
	}
	sort.Strings(ids)
	fmt.Printf("DELETED %s\n", strings.Join(ids, " "))
	return nil
}
