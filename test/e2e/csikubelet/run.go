package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
)

const gib = 1 << 30

// run is the play's state: the two plugins and what it made.
type run struct {
	ctx        context.Context
	o          options
	ctrl, node *plugin
	cc         csipb.ControllerClient
	nc         csipb.NodeClient
	nodeID     string
	vol        *volume   // the main volume: provisioned, written, expanded
	made       []*volume // every volume made, deleted at the end
	snaps      []string
	data       []byte // what the first pod wrote
}

// volume is a provisioned volume and where kubelet put it.
type volume struct {
	id, name string
	pub      map[string]string // publish context
	staging  string
	targets  []string
}

func newRun(ctx context.Context, o options) *run {
	r := &run{ctx: ctx, o: o}
	r.ctrl = newPlugin(o, "controller", "controller", nil)
	r.node = newPlugin(o, "node", "node", o.nodeArgs)
	return r
}

// step runs fn and prints its line.
func (r *run) step(name string, fn func() error) error {
	begin := time.Now()
	if err := fn(); err != nil {
		fmt.Printf("STEP %s FAIL %s\n", name, oneLine(err.Error()))
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Printf("STEP %s ok %.2f\n", name, time.Since(begin).Seconds())
	return nil
}

// timed runs fn and prints its TIME line.
func timed(name string, fn func() error) (time.Duration, error) {
	begin := time.Now()
	err := fn()
	d := time.Since(begin)
	if err == nil {
		fmt.Printf("TIME %s %.3f\n", name, d.Seconds())
	}
	return d, err
}

func (r *run) start() error {
	if err := os.MkdirAll(r.o.work, 0o700); err != nil {
		return err
	}
	for _, p := range []*plugin{r.ctrl, r.node} {
		if err := p.start(r.ctx); err != nil {
			return err
		}
		fmt.Printf("TIME start-%s %.3f\n", p.name, p.started.Seconds())
	}
	r.cc, r.nc = csipb.NewControllerClient(r.ctrl.conn), csipb.NewNodeClient(r.node.conn)
	for _, p := range []*plugin{r.ctrl, r.node} {
		if err := r.rss(p, "start"); err != nil {
			return err
		}
	}
	info, err := r.nc.NodeGetInfo(r.ctx, &csipb.NodeGetInfoRequest{})
	if err != nil {
		return fmt.Errorf("NodeGetInfo: %w", err)
	}
	r.nodeID = info.GetNodeId()
	return nil
}

func (r *run) rss(p *plugin, when string) error {
	kb, err := p.rssKB()
	if err != nil {
		return err
	}
	fmt.Printf("RSS %s-%s %d\n", p.name, when, kb)
	return nil
}

func (r *run) close() {
	r.ctrl.stop()
	r.node.stop()
}

func mountCap() *csipb.VolumeCapability {
	return &csipb.VolumeCapability{
		AccessType: &csipb.VolumeCapability_Mount{Mount: &csipb.VolumeCapability_MountVolume{FsType: "ext4"}},
		AccessMode: &csipb.VolumeCapability_AccessMode{Mode: csipb.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// create provisions a volume as external-provisioner does.
func (r *run) create(name string, params map[string]string, src *csipb.VolumeContentSource) (*volume, error) {
	resp, err := r.cc.CreateVolume(r.ctx, &csipb.CreateVolumeRequest{
		Name: name, CapacityRange: &csipb.CapacityRange{RequiredBytes: gib},
		VolumeCapabilities: []*csipb.VolumeCapability{mountCap()}, Parameters: params, VolumeContentSource: src,
	})
	if err != nil {
		return nil, fmt.Errorf("CreateVolume %s: %w", name, err)
	}
	sum := sha256.Sum256([]byte(resp.GetVolume().GetVolumeId()))
	v := &volume{id: resp.GetVolume().GetVolumeId(), name: name,
		staging: filepath.Join(r.o.kubeletDir, "plugins/kubernetes.io/csi", "cinder.brick-storage.io", hex.EncodeToString(sum[:]), "globalmount")}
	r.made = append(r.made, v)
	for _, pod := range []string{"pod-a", "pod-b"} {
		v.targets = append(v.targets, filepath.Join(r.o.kubeletDir, "pods", pod+"-"+v.id[:8], "volumes/kubernetes.io~csi", name, "mount"))
	}
	return v, nil
}

// attach is the attacher's ControllerPublish and kubelet's NodeStage.
func (r *run) attach(v *volume) error {
	pub, err := r.cc.ControllerPublishVolume(r.ctx, &csipb.ControllerPublishVolumeRequest{
		VolumeId: v.id, NodeId: r.nodeID, VolumeCapability: mountCap()})
	if err != nil {
		return fmt.Errorf("ControllerPublishVolume %s: %w", v.id, err)
	}
	v.pub = pub.GetPublishContext()
	return r.stage(v)
}

func (r *run) stage(v *volume) error {
	if err := os.MkdirAll(v.staging, 0o750); err != nil {
		return err
	}
	_, err := r.nc.NodeStageVolume(r.ctx, &csipb.NodeStageVolumeRequest{VolumeId: v.id, PublishContext: v.pub,
		StagingTargetPath: v.staging, VolumeCapability: mountCap()})
	if err != nil {
		return fmt.Errorf("NodeStageVolume %s: %w", v.id, err)
	}
	return nil
}

// publish is kubelet's NodePublish for pod i (kubelet makes the parent).
func (r *run) publish(v *volume, i int) error {
	if err := os.MkdirAll(filepath.Dir(v.targets[i]), 0o750); err != nil {
		return err
	}
	_, err := r.nc.NodePublishVolume(r.ctx, &csipb.NodePublishVolumeRequest{VolumeId: v.id, PublishContext: v.pub,
		StagingTargetPath: v.staging, TargetPath: v.targets[i], VolumeCapability: mountCap()})
	if err != nil {
		return fmt.Errorf("NodePublishVolume %s to %s: %w", v.id, v.targets[i], err)
	}
	return nil
}

// teardown is kubelet's NodeUnpublish (every pod) and NodeUnstage, then
// the attacher's ControllerUnpublish; nothing of v may stay mounted.
func (r *run) teardown(v *volume) error {
	for _, t := range v.targets {
		if _, err := r.nc.NodeUnpublishVolume(r.ctx, &csipb.NodeUnpublishVolumeRequest{VolumeId: v.id, TargetPath: t}); err != nil {
			return fmt.Errorf("NodeUnpublishVolume %s: %w", t, err)
		}
	}
	if _, err := r.nc.NodeUnstageVolume(r.ctx, &csipb.NodeUnstageVolumeRequest{VolumeId: v.id, StagingTargetPath: v.staging}); err != nil {
		return fmt.Errorf("NodeUnstageVolume %s: %w", v.id, err)
	}
	if _, err := r.cc.ControllerUnpublishVolume(r.ctx, &csipb.ControllerUnpublishVolumeRequest{VolumeId: v.id, NodeId: r.nodeID}); err != nil {
		return fmt.Errorf("ControllerUnpublishVolume %s: %w", v.id, err)
	}
	if m := mountsUnder(r.o.kubeletDir); len(m) > 0 {
		return fmt.Errorf("after the teardown of %s still mounted: %v", v.id, m)
	}
	return r.cinderStatus(v.id, "available")
}

// mountsUnder lists the mount points under dir.
func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			out = append(out, f[4])
		}
	}
	return out
}

// mountSource is the device mounted at dir.
func mountSource(dir string) string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) > 9 && f[4] == dir {
			for i, x := range f {
				if x == "-" && i+2 < len(f) {
					return f[i+2]
				}
			}
		}
	}
	return ""
}

func (r *run) writeData(path string) error {
	r.data = make([]byte, 1<<20)
	if _, err := rand.Read(r.data); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(path, "data"))
	if err != nil {
		return err
	}
	if _, err := f.Write(r.data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (r *run) checkData(path string) error {
	got, err := os.ReadFile(filepath.Join(path, "data"))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, r.data) {
		return fmt.Errorf("%s/data: %d bytes, not what was written", path, len(got))
	}
	return nil
}

// cinder sends one noauth call to the test bed Cinder.
func (r *run) cinder(method, path string, out any) error {
	req, err := http.NewRequestWithContext(r.ctx, method, r.o.cinder+"/"+r.o.project+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", "brick:"+r.o.project)
	req.Header.Set("OpenStack-API-Version", "volume 3.70")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("cinder %s %s: %s", method, path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (r *run) cinderStatus(id, want string) error {
	var v struct {
		Volume struct{ Status string } `json:"volume"`
	}
	if err := r.cinder(http.MethodGet, "/volumes/"+id, &v); err != nil {
		return err
	}
	if v.Volume.Status != want {
		return fmt.Errorf("volume %s is %s in Cinder, want %s", id, v.Volume.Status, want)
	}
	return nil
}

// cinderCount is how many volumes and snapshots the project has.
func (r *run) cinderCount() (string, error) {
	var v struct{ Volumes []struct{ ID string } }
	var s struct{ Snapshots []struct{ ID string } }
	if err := r.cinder(http.MethodGet, "/volumes", &v); err != nil {
		return "", err
	}
	if err := r.cinder(http.MethodGet, "/snapshots", &s); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d volumes, %d snapshots", len(v.Volumes), len(s.Snapshots)), nil
}
