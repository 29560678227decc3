package settings

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// The spellings python-brick-cinderclient-ext users type: flag names with
// underscores (--enforce_multipath) and a bool flag's value as a separate
// word (--multipath True).

// extBoolFlags are the bool flags the extension gives a separate value.
var extBoolFlags = []string{"--multipath", "--enforce-multipath", "--enforce_multipath"}

// JoinBoolValues turns "--multipath True" into "--multipath=True" (a bool
// flag otherwise takes "True" for an argument); any other word after the
// flag, and everything after "--", is left alone.
func JoinBoolValues(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		if i+1 < len(args) && slices.Contains(extBoolFlags, args[i]) {
			switch strings.ToLower(args[i+1]) {
			case "true", "false":
				out = append(out, args[i]+"="+args[i+1])
				i++
				continue
			}
		}
		out = append(out, args[i])
	}
	return out
}

// NormalizeFlagName accepts --enforce_multipath for --enforce-multipath;
// cobra's SetGlobalNormalizationFunc takes it.
func NormalizeFlagName(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}
