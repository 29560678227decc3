// Command inproc times connector/nvmeof's Connect and Disconnect inside one
// process, the counterpart of bench/nvmeof/osbrick.py's "timed" mode (which
// times os-brick's connect_volume and disconnect_volume the same way). It is
// a benchmark tool, not part of brick.
//
//	inproc CONNECTION_INFO.json [ROUNDS]
//
// Prints one line per round: connect seconds, disconnect seconds, their
// sum and the device path.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/nvmeof"
	"github.com/brick-storage/brick/host"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: inproc CONNECTION_INFO.json [ROUNDS]")
		os.Exit(2)
	}
	rounds := 1
	if len(os.Args) > 2 {
		n, err := strconv.Atoi(os.Args[2])
		if err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "inproc: ROUNDS must be a positive number")
			os.Exit(2)
		}
		rounds = n
	}
	raw, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = run(raw, rounds)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "inproc:", err)
		os.Exit(1)
	}
}

func run(raw []byte, rounds int) error {
	info, err := connector.ParseConnectionInfo(raw)
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if os.Getenv("BRICK_BENCH_DEBUG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	c := nvmeof.New(host.New("/", logger, host.NewRedactor()), nvmeof.Options{})
	ctx := context.Background()
	for i := 0; i < rounds; i++ {
		t0 := time.Now()
		dev, err := c.Connect(ctx, info)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		t1 := time.Now()
		if err := c.Disconnect(ctx, info, dev, connector.DisconnectOptions{}); err != nil {
			return fmt.Errorf("disconnect: %w", err)
		}
		t2 := time.Now()
		fmt.Printf("%.3f %.3f %.3f %s\n", t1.Sub(t0).Seconds(), t2.Sub(t1).Seconds(), t2.Sub(t0).Seconds(), dev.Path)
	}
	return nil
}
