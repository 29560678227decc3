// Package testbed starts and stops the real services brick's e2e tests run
// against, and offers the few HTTP calls the tests need to set up and check
// state on them.
//
// The services are the project's own scripts: test/cinder/up.sh (a real
// Cinder, noauth, sqlite, volumes as sparse files exported by a real tgtd)
// and test/ironic/up.sh (a real Ironic, noauth, sqlite, fake-hardware). The
// Go side only runs those scripts with settings passed as environment
// variables and reads the env file they write, so a person at a shell and a
// test get the same service:
//
//	c, err := testbed.EnsureCinder(ctx, testbed.CinderOptions{})
//	vol, err := c.CreateVolume(ctx, "smoke", 1)
//	_, err = os.Stat(c.BackingFile(vol.ID))
//
// Ensure* share one service per process and restart it when a test asks for
// other settings; StopStarted (called from TestMain) stops what this process
// started and leaves alone what was already running before it.
//
// The scripts need test/install.sh to have run, and root.
package testbed

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// EnvKeepUp, when set to 1, makes StopStarted leave the services running, so
// that repeated test runs skip the cold start.
const EnvKeepUp = "BRICK_TB_KEEP_UP"

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// RepoRoot returns the directory holding brick's go.mod, found by walking up
// from this package's source directory (or, when the binary was built with
// -trimpath, from the working directory). BRICK_REPO_ROOT overrides both.
func RepoRoot() (string, error) {
	rootOnce.Do(func() {
		if dir := os.Getenv("BRICK_REPO_ROOT"); dir != "" {
			rootDir, rootErr = findModuleRoot(dir)
			return
		}
		var starts []string
		if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
			starts = append(starts, filepath.Dir(file))
		}
		if wd, err := os.Getwd(); err == nil {
			starts = append(starts, wd)
		}
		rootErr = errors.New("testbed: no go.mod of github.com/brick-storage/brick above the package or working directory; set BRICK_REPO_ROOT")
		for _, s := range starts {
			if dir, err := findModuleRoot(s); err == nil {
				rootDir, rootErr = dir, nil
				return
			}
		}
	})
	return rootDir, rootErr
}

const modulePath = "github.com/brick-storage/brick"

// findModuleRoot walks up from dir to the directory whose go.mod declares
// brick's module.
func findModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declaresModule(data, modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testbed: no go.mod for %s above %s", modulePath, dir)
		}
		dir = parent
	}
}

func declaresModule(gomod []byte, path string) bool {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == path {
			return true
		}
	}
	return false
}

// scriptTimeout bounds one up.sh/down.sh run when the caller's context has
// no earlier deadline. A cold Cinder start takes ~10 s on an idle 2-core
// host and ~40 s on a busy one.
const scriptTimeout = 5 * time.Minute

// startService runs a service's up script (rel) with env, marked as this
// process's start (BRICK_TB_STARTER), and returns the env file the script
// writes in stateDir: what the service runs with now.
func startService(ctx context.Context, rel, stateDir string, env map[string]string) (map[string]string, error) {
	env["BRICK_TB_STARTER"] = starterToken
	if _, err := runScript(ctx, rel, env); err != nil {
		return nil, err
	}
	out, err := ParseEnvFile(filepath.Join(stateDir, "env"))
	if err != nil {
		return nil, fmt.Errorf("testbed: %s: env file: %w", rel, err)
	}
	return out, nil
}

// runScript runs rel (a path under the repo root) with env added to the
// process environment, as an argv (no shell parses anything), in its own
// process group so that a timeout kills the script and its helpers (the
// services it starts put themselves in their own sessions and survive, and
// down.sh finds them through their pid files). It returns stdout; a failure
// carries stderr, which is where the scripts explain themselves.
func runScript(ctx context.Context, rel string, env map[string]string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, scriptTimeout)
	defer cancel()
	script := filepath.Join(root, rel)
	cmd := exec.CommandContext(ctx, script)
	cmd.Dir = root
	cmd.Env = mergeEnv(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// Negative pid: the whole group the script leads.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (after %s)", ctx.Err(), time.Since(start).Round(time.Millisecond))
		}
		return stdout.String(), fmt.Errorf("testbed: %s: %w\n%s", rel, err, tail(stderr.String(), 40))
	}
	return stdout.String(), nil
}

// mergeEnv returns base with every key of add set to add's value (replacing
// an inherited value: a test's options, not the caller's shell, decide).
func mergeEnv(base []string, add map[string]string) []string {
	out := make([]string, 0, len(base)+len(add))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := add[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range add {
		out = append(out, k+"="+v)
	}
	return out
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// ParseEnvFile reads the KEY=VALUE lines an up.sh writes. Blank lines and
// lines starting with # are skipped; values are taken verbatim (the scripts
// never quote).
func ParseEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseEnv(data)
}

func parseEnv(data []byte) (map[string]string, error) {
	env := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("testbed: env line %d is not KEY=VALUE: %q", i+1, line)
		}
		env[k] = v
	}
	return env, nil
}

// need returns env[key] or an error naming the key and the file.
func need(env map[string]string, key, file string) (string, error) {
	v, ok := env[key]
	if !ok || v == "" {
		return "", fmt.Errorf("testbed: %s has no %s", file, key)
	}
	return v, nil
}

// starterToken identifies this process to up.sh (BRICK_TB_STARTER). A cold
// start records it in the env file (BRICK_TB_*_STARTED_BY) under the
// script's lock; a no-op keeps the earlier one. So "did this process start
// the service" is decided by the script, race-free against other processes.
var starterToken = func() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return fmt.Sprintf("pid%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return fmt.Sprintf("go%d-%s", os.Getpid(), hex.EncodeToString(b))
}()

// userLock is a shared flock on <state>/users.lock that a process holds
// while it uses a service. StopStarted stops a service only when it can
// take the lock exclusively, i.e. when no other test process (another `go
// test` on the same host) still uses it.
type userLock struct{ f *os.File }

func lockShared(stateDir string) (*userLock, error) {
	f, err := os.OpenFile(filepath.Join(stateDir, "users.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, err
	}
	return &userLock{f: f}, nil
}

// releaseAndCheckSole drops this process's shared lock and reports whether
// no other process holds one. When it returns true it holds the lock
// exclusively until done is called.
func (l *userLock) releaseAndCheckSole() (sole bool, done func()) {
	path := l.f.Name()
	l.f.Close()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return true, func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false, func() {}
	}
	return true, func() { f.Close() }
}

// envOr returns the environment variable key, or def when it is unset or
// empty. Only where a service lives (state dir, port) is taken from the
// environment; what it does (CHAP, portals, page size) is the test's choice.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envIntOr(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil && n > 0 {
		return n
	}
	return def
}

func boolEnv(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
