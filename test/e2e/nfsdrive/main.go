//go:build e2e

// Command nfsdrive drives brick's NFS connector inside the e2e test guest:
// it calls the library the way brick's connect and disconnect commands do,
// so the connector is proven on a real kernel whatever the CLI looks like.
//
//	nfsdrive connect [-as-block] [-mount-options OPTS] [-device-out FILE] INFO.json
//	nfsdrive disconnect [-force] INFO.json [DEVICE.json]
//	nfsdrive paths INFO.json
//
// connect prints the device as shell assignments (DEV_PATH=..., DEV_TYPE=...,
// DEV_<EXTRA KEY>=...). A busy refusal exits 3, any other error 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/brick-storage/brick/connector"
	"github.com/brick-storage/brick/connector/nfs"
	"github.com/brick-storage/brick/host"
)

func main() {
	if len(os.Args) < 2 {
		fail(errors.New("usage: nfsdrive connect|disconnect|paths ..."))
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	asBlock := fs.Bool("as-block", false, "loop device over the file")
	mountOpts := fs.String("mount-options", "", "brick config mount options")
	devOut := fs.String("device-out", "", "write the device JSON here")
	force := fs.Bool("force", false, "disconnect even if busy")
	_ = fs.Parse(os.Args[2:])
	args := fs.Args()
	if len(args) < 1 {
		fail(errors.New("missing INFO.json"))
	}

	red := host.NewRedactor()
	logger := slog.New(host.NewRedactingHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}), red))
	h := host.New("/", logger, red)
	c := nfs.New(h, nfs.Options{AsBlock: *asBlock, MountOptions: *mountOpts})

	raw, err := os.ReadFile(args[0])
	if err != nil {
		fail(err)
	}
	info, err := connector.ParseConnectionInfo(raw)
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()

	switch os.Args[1] {
	case "connect":
		dev, err := c.Connect(ctx, info)
		if err != nil {
			fail(err)
		}
		if *devOut != "" {
			b, _ := json.Marshal(dev)
			if err := os.WriteFile(*devOut, b, 0o600); err != nil {
				fail(err)
			}
		}
		fmt.Printf("DEV_PATH=%s\nDEV_TYPE=%s\n", dev.Path, dev.Type)
		keys := make([]string, 0, len(dev.Extra))
		for k := range dev.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Printf("DEV_%s=%s\n", strings.ToUpper(k), dev.Extra[k])
		}
	case "disconnect":
		var dev *connector.Device
		if len(args) > 1 {
			b, err := os.ReadFile(args[1])
			if err != nil {
				fail(err)
			}
			dev = &connector.Device{}
			if err := json.Unmarshal(b, dev); err != nil {
				fail(err)
			}
		}
		if err := c.Disconnect(ctx, info, dev, connector.DisconnectOptions{Force: *force}); err != nil {
			fail(err)
		}
	case "paths":
		paths, err := c.DevicePaths(ctx, info)
		if err != nil {
			fail(err)
		}
		fmt.Println(strings.Join(paths, " "))
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
	fmt.Fprintf(os.Stderr, "nfsdrive %s took %.3fs\n", os.Args[1], time.Since(start).Seconds())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "nfsdrive:", err)
	if errors.Is(err, host.ErrDeviceBusy) {
		os.Exit(3)
	}
	os.Exit(1)
}
