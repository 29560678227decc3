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
	flag.Parse()
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
			if j == 0 {
				sa = append(sa, s)
			} else {
				sb = append(sb, s)
			}
		}
	}
	if *header {
		fmt.Printf("%-28s %12s %12s %10s %5s %22s %22s %9s %9s\n", "operation", "brick med", "os-brick med", "ratio", "runs", "brick min/max", "os-brick min/max", "brick RSS", "osb RSS")
	}
	ma, mb := median(sa), median(sb)
	fmt.Printf("%-28s %12s %12s %9.1fx %5d %22s %22s %7dMB %7dMB\n", *label, ms(ma), ms(mb), float64(mb)/float64(ma), *runs,
		ms(minWall(sa))+"/"+ms(maxWall(sa)), ms(minWall(sb))+"/"+ms(maxWall(sb)), maxRSS(sa)/1024, maxRSS(sb)/1024)
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
