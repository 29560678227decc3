// Command directreader is a test tool for guest scripts: it reads a block
// device with O_DIRECT in a loop and compares each read with a pattern
// file, counting good reads and failed or wrong ones, until SIGTERM. One
// process for a reader's whole life replaces a dd and a cmp per read,
// whose process starts cost a TCG guest's CPU that the attaches under
// test need.
//
//	directreader -dev /dev/sda -pattern /tmp/pat -offset 4194304 -progress /tmp/prog
//
// On SIGTERM it finishes the read under way and prints "<good> <bad>".
// -progress is rewritten (by rename) with "<good> <bad>" after every read,
// so a script can wait for reads instead of sleeping. A failed or wrong
// read is one line on stderr.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	dev := flag.String("dev", "", "block device to read")
	pattern := flag.String("pattern", "", "file holding what every read must return (its size is the read size)")
	offset := flag.Int64("offset", 0, "byte offset of the reads (a multiple of 4096)")
	progress := flag.String("progress", "", "file rewritten with \"<good> <bad>\" after every read")
	interval := flag.Duration("interval", 500*time.Millisecond, "pause between reads")
	flag.Parse()
	want, err := os.ReadFile(*pattern)
	if err != nil || len(want) == 0 || len(want)%4096 != 0 || *offset%4096 != 0 {
		fmt.Fprintf(os.Stderr, "directreader: need -pattern of a non-zero multiple of 4096 bytes and an aligned -offset: %v\n", err)
		os.Exit(2)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	good, bad := loop(*dev, want, *offset, *progress, *interval, stop)
	fmt.Printf("%d %d\n", good, bad)
}

// loop reads until stop fires, counting good and bad reads.
func loop(dev string, want []byte, offset int64, progress string, interval time.Duration, stop <-chan os.Signal) (good, bad int) {
	// O_DIRECT wants an aligned buffer: an anonymous mapping is page-aligned.
	buf, err := syscall.Mmap(-1, 0, len(want), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		fmt.Fprintf(os.Stderr, "directreader: buffer: %v\n", err)
		os.Exit(2)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := readOnce(dev, buf, want, offset); err != nil {
			bad++
			fmt.Fprintf(os.Stderr, "directreader: %s: %v\n", dev, err)
		} else {
			good++
		}
		if progress != "" {
			writeProgress(progress, good, bad)
		}
		select {
		case <-stop:
			return good, bad
		case <-tick.C:
		}
	}
}

// readOnce opens dev with O_DIRECT (a fresh open each time, as dd did),
// reads len(buf) bytes at offset and compares them with want.
func readOnce(dev string, buf, want []byte, offset int64) error {
	f, err := os.OpenFile(dev, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := f.ReadAt(buf, offset)
	if err != nil {
		return fmt.Errorf("read %d bytes at %d: %w (%d read)", len(buf), offset, err, n)
	}
	if !bytes.Equal(buf, want) {
		return errors.New("the data read is not the pattern")
	}
	return nil
}

func writeProgress(file string, good, bad int) {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d %d\n", good, bad), 0o644); err == nil {
		_ = os.Rename(tmp, file)
	}
}
