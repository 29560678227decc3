package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// plugin is one brick csi process and a client connection to it.
type plugin struct {
	name, sock, log string
	argv            []string
	cmd             *exec.Cmd
	conn            *grpc.ClientConn
	started         time.Duration // from exec to the first answered Probe
}

func newPlugin(o options, name, mode string, extra []string) *plugin {
	sock := filepath.Join(o.work, name+".sock")
	argv := append([]string{o.brick, "csi", "--mode", mode, "--endpoint", "unix://" + sock,
		"--kubelet-dir", o.kubeletDir}, extra...)
	return &plugin{name: name, sock: sock, log: filepath.Join(o.logDir, "csi-"+name+".log"), argv: argv}
}

// start runs the process (its output appended to its log) and waits until
// it answers Probe with ready.
func (p *plugin) start(ctx context.Context) error {
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	p.cmd = exec.Command(p.argv[0], p.argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	begin := time.Now()
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	if p.conn == nil {
		if p.conn, err = grpc.NewClient("unix://"+p.sock, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return err
		}
	}
	id := csipb.NewIdentityClient(p.conn)
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		r, err := id.Probe(pctx, &csipb.ProbeRequest{})
		cancel()
		if err == nil && (r.GetReady() == nil || r.GetReady().GetValue()) {
			p.started = time.Since(begin)
			return nil
		}
		if p.exited() {
			return fmt.Errorf("%s exited at start; see %s", p.name, p.log)
		}
		if time.Since(begin) > 60*time.Second {
			return fmt.Errorf("%s: no ready Probe within 60 s: %v", p.name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exited: the process has ended (a zombie counts).
func (p *plugin) exited() bool {
	var st syscall.WaitStatus
	pid, _ := syscall.Wait4(p.cmd.Process.Pid, &st, syscall.WNOHANG, nil)
	return pid == p.cmd.Process.Pid
}

// kill ends the process with SIGKILL and reaps it.
func (p *plugin) kill() error {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil
	}
	return err
}

// stop ends the process with SIGTERM (kill -9 after 30 s).
func (p *plugin) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// rssKB is the process's VmRSS.
func (p *plugin) rssKB() (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("%s: no VmRSS", p.name)
}
