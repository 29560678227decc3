// Command compare times two commands side by side, interleaved A B A B so
// machine drift hits both alike, and prints medians, min/max, the ratio and
// peak RSS. It is a benchmark tool, not part of brick.
//
//	compare -label get-connector -runs 30 -- brick get-connector :: python3 -c '...'
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type sample struct {
	wall   time.Duration
	maxRSS int64 // KiB
}

func main() {
	label := flag.String("label", "operation", "name of the operation in the table")
	runs := flag.Int("runs", 20, "runs of each command")
	warmup := flag.Int("warmup", 2, "untimed runs of each command first (page cache, pyc files)")
	header := flag.Bool("header", false, "print the table header first")
	samples := flag.String("samples", "", "also append every timed run to this file: label, tool, seconds, peak RSS KiB (bench/run.sh reads it)")
	names := flag.String("names", "brick,os-brick", "the two tools' names in the samples file")
	waitGone := flag.String("wait-gone", "", "after each run, wait (untimed, up to 30 s) until no process whose command line contains this string is left: os-brick leaves its privsep-helper daemon running for 3-4 s after it exits, which would otherwise be timed as part of the next run")
	flag.Parse()
	leftovers := newWaiter(*waitGone)
	a, b, ok := splitArgs(flag.Args())
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: compare [flags] -- brick-command... :: other-command...")
		os.Exit(2)
	}
	for i := 0; i < *warmup; i++ {
		for _, argv := range [][]string{a, b} {
			if _, err := runOnce(argv); err != nil {
				fmt.Fprintf(os.Stderr, "compare: warm-up %s: %v\n", argv[0], err)
				os.Exit(1)
			}
			leftovers.wait()
		}
	}
	var sa, sb []sample
	for i := 0; i < *runs; i++ {
		for j, argv := range [][]string{a, b} {
			s, err := runOnce(argv)
			if err != nil {
				fmt.Fprintf(os.Stderr, "compare: %s: %v\n", argv[0], err)
				os.Exit(1)
			}
			leftovers.wait()
			if j == 0 {
				sa = append(sa, s)
			} else {
				sb = append(sb, s)
			}
		}
	}
	if *samples != "" {
		if err := writeSamples(*samples, *label, strings.SplitN(*names+",", ",", 3)[:2], sa, sb); err != nil {
			fmt.Fprintf(os.Stderr, "compare: %v\n", err)
			os.Exit(1)
		}
	}
	if *header {
		fmt.Printf("%-28s %12s %12s %10s %5s %22s %22s %9s %9s\n", "operation", "brick med", "os-brick med", "ratio", "runs", "brick min/max", "os-brick min/max", "brick RSS", "osb RSS")
	}
	ma, mb := median(sa), median(sb)
	fmt.Printf("%-28s %12s %12s %9.1fx %5d %22s %22s %7dMB %7dMB\n", *label, ms(ma), ms(mb), float64(mb)/float64(ma), *runs,
		ms(minWall(sa))+"/"+ms(maxWall(sa)), ms(minWall(sb))+"/"+ms(maxWall(sb)), maxRSS(sa)/1024, maxRSS(sb)/1024)
}

// waiter waits for processes a run left behind: those whose command line
// contains pattern, except the ones already running when compare started
// (a long-lived service's own daemon).
type waiter struct {
	pattern string
	before  map[string]bool
}

func newWaiter(pattern string) *waiter {
	w := &waiter{pattern: pattern, before: map[string]bool{}}
	if pattern != "" {
		for _, pid := range w.matching() {
			w.before[pid] = true
		}
	}
	return w
}

// wait polls /proc until no new matching process is left, for at most 30 s.
func (w *waiter) wait() {
	if w.pattern == "" {
		return
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		left := false
		for _, pid := range w.matching() {
			left = left || !w.before[pid]
		}
		if !left {
			return
		}
	}
	fmt.Fprintf(os.Stderr, "compare: a process matching %q still runs after 30 s\n", w.pattern)
}

func (w *waiter) matching() []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' || d.Name() == self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(cmdline), "\x00", " "), w.pattern) {
			out = append(out, d.Name())
		}
	}
	return out
}

func writeSamples(file, label string, names []string, sa, sb []sample) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	for i, set := range [][]sample{sa, sb} {
		for _, x := range set {
			fmt.Fprintf(f, "%s %s %.6f %d\n", label, names[i], x.wall.Seconds(), x.maxRSS)
		}
	}
	return f.Close()
}

func splitArgs(args []string) (a, b []string, ok bool) {
	i := slices.Index(args, "::")
	if i <= 0 || i == len(args)-1 {
		return nil, nil, false
	}
	return args[:i], args[i+1:], true
}

func runOnce(argv []string) (sample, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s := sample{wall: wall}
	if ru != nil {
		s.maxRSS = ru.Maxrss
	}
	return s, nil
}

func median(s []sample) time.Duration {
	w := walls(s)
	slices.Sort(w)
	if len(w)%2 == 1 {
		return w[len(w)/2]
	}
	return (w[len(w)/2-1] + w[len(w)/2]) / 2
}

func walls(s []sample) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, x := range s {
		out[i] = x.wall
	}
	return out
}

func minWall(s []sample) time.Duration { return slices.Min(walls(s)) }
func maxWall(s []sample) time.Duration { return slices.Max(walls(s)) }

func maxRSS(s []sample) int64 {
	var m int64
	for _, x := range s {
		m = max(m, x.maxRSS)
	}
	return m
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
