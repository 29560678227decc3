package volume

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/brick-storage/brick/attach"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/internal/cmd/connflags"
	"github.com/brick-storage/brick/internal/cmd/factory"
	"github.com/brick-storage/brick/internal/view"
	"github.com/brick-storage/brick/multipath"
)

// extendOptions are extend's.
type extendOptions struct {
	f            *factory.Factory
	Extend       attach.ExtendOptions
	FixedKeyFile string
	Conn         connflags.Options
}

// NewCmdExtend is `brick extend VOLUME`.
func NewCmdExtend(f *factory.Factory, runF func(context.Context, *extendOptions) error) *cobra.Command {
	o := &extendOptions{f: f}
	cmd := &cobra.Command{
		Use:   "extend VOLUME (--size GiB | --local-only)",
		Short: "Grow an attached volume online: Cinder, every path, the multipath map, the filesystem",
		Long: `Grow a volume brick attached to this host, without detaching it.

With --size, brick asks Cinder to extend the in-use volume (os-extend at
microversion 3.42 or later) and waits for Cinder to report the new size.
Then, on this host: every path of the device is rescanned (refused, naming
the path, while one is not running: a map resized over a stale path corrupts
data), the multipath map is resized through multipathd and checked against
its paths, and the filesystem brick mounted is grown online (resize2fs for
ext2/3/4, xfs_growfs for xfs). The local record and brick list show the new
size.

With --local-only the volume grew elsewhere (or an earlier extend stopped
part-way): only the host side runs. A failure leaves the volume usable at
its old size; the error names the step that failed.`,
		Example: `  brick extend my-volume --size 2
  brick extend 0b7d... --local-only`,
		Args: cobra.ExactArgs(1),
		RunE: factory.RunE(o, o.validate, func(args []string) { o.Extend.Volume = args[0] }, extendRun, runF),
	}
	fl := cmd.Flags()
	f.AddAuthFlags(fl)
	f.AddRecordOutputFlags(fl)
	fl.IntVar(&o.Extend.SizeGiB, "size", 0, "the new size in GiB to ask Cinder for")
	fl.BoolVar(&o.Extend.LocalOnly, "local-only", false, "grow the host side only: the volume grew elsewhere, or an earlier extend stopped part-way")
	connflags.AddFixedKeyFlag(fl, &o.FixedKeyFile)
	fl.DurationVar(&o.Extend.CinderTimeout, "cinder-timeout", cinderapi.DefaultExtendTimeout, "how long to wait for Cinder to finish the extend")
	// The same limit as local-attach's flag: here it bounds the wait for
	// a path that is not running to come back before the host side is
	// refused (a session in recovery comes back by itself).
	fl.DurationVar(&o.Conn.ISCSI.MultipathOptions.MapTimeout, "multipath-map-timeout", multipath.DefaultMapTimeout,
		"how long a path that is not running may take to come back before the host side is refused (and the limit for each multipathd query)")
	return cmd
}

func (o *extendOptions) validate() error {
	if o.Extend.LocalOnly == (o.Extend.SizeGiB > 0) {
		return errors.New("extend: give --size GiB (grow in Cinder, then here) or --local-only (grow here only)")
	}
	return nil
}

func extendRun(ctx context.Context, o *extendOptions) error {
	f, ref := o.f, o.Extend.Volume
	if err := f.NeedRoot("extend"); err != nil {
		return err
	}
	m, err := connflags.Manager(ctx, f, o.Conn, !o.Extend.LocalOnly, "extend", ref)
	if err != nil {
		return err
	}
	if err := extendCrypt(ctx, f, m, ref, o.FixedKeyFile); err != nil {
		return err
	}
	ctx, end := f.Track(f.TestHooks(ctx), "extend", ref)
	res, err := m.Extend(ctx, o.Extend)
	end()
	if err != nil {
		return err
	}
	return f.Output().PrintRecord(f.Stdout, view.Extend(res))
}

// extendCrypt gives the manager key access when the volume is encrypted:
// cryptsetup resize may need the key, and its ID comes from Cinder, even
// with --local-only.
func extendCrypt(ctx context.Context, f *factory.Factory, m *attach.Manager, ref, fixedKeyFile string) error {
	rec, err := m.Record(ref)
	if err != nil || rec.Crypt == nil {
		return nil // Extend reports a missing record itself
	}
	if m.Cinder == nil {
		c, err := f.Cinder(ctx)
		if err != nil {
			return fmt.Errorf("extend %s: the encrypted volume's key needs Cinder: %w", ref, err)
		}
		m.Cinder = c
	}
	m.Crypt, err = f.Crypt(ctx, m.Cinder, fixedKeyFile)
	return err
}
