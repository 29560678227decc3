package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/internal/settings"
)

// manSection is where brick's pages go: a command for the administrator,
// run as root.
const manSection = "8"

// TestManPages writes one man page per command with cobra's generator,
// each titled with its command, its cloud flags in a section of their own
// and ENVIRONMENT, FILES and EXIT STATUS sections, and checks each names
// its command and its flags. The generator lives in a test so the brick
// binary does not link it: its Markdown packages' initialisers cost every
// brick start about 2 ms. make man and packaging/deb.sh run this test with
// BRICK_MAN_DIR set (and SOURCE_DATE_EPOCH, which cobra honours, for
// reproducible dates).
func TestManPages(t *testing.T) {
	dir := os.Getenv("BRICK_MAN_DIR")
	if dir == "" {
		dir = t.TempDir()
		t.Setenv("SOURCE_DATE_EPOCH", "1764720000")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	root := newApp(io.Discard, io.Discard).rootCommand(nil)
	root.DisableAutoGenTag = true
	want := availableCommands(root)
	require.Greater(t, len(want), 20)
	for _, c := range want {
		page := manPage(t, c)
		name := manName(c) + "." + manSection
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(page), 0o644))
		require.Contains(t, page, `.TH "`+strings.ToUpper(manName(c))+`" "8"`, name)
		for _, sec := range []string{"ENVIRONMENT", "FILES", "EXIT STATUS"} {
			require.Contains(t, page, "\n.SH "+sec+"\n", name)
		}
		require.NotContains(t, page, "Auto generated", name)
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				require.Contains(t, page, `\fB--`+f.Name+`\fP`, "%s documents --%s", name, f.Name)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, len(want), "no page for a hidden command")
}

// manName is a command's page name: brick-ironic-connector-list.
func manName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// manPage is c's page: cobra's, without the cloud flags, which follow in
// CLOUD OPTIONS, then ENVIRONMENT, FILES and EXIT STATUS.
func manPage(t *testing.T, c *cobra.Command) string {
	var cloud []*pflag.Flag
	_ = c.LocalFlags() // merges the parents' persistent flags into c.Flags()
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if isCloudFlag(f) && !f.Hidden {
			cloud = append(cloud, f)
			f.Hidden = true
		}
	})
	header := &doc.GenManHeader{Title: strings.ToUpper(manName(c)), Section: manSection,
		Source: "brick " + readBuildInfo().Version, Manual: "brick manual"}
	var b bytes.Buffer
	require.NoError(t, doc.GenMan(c, header, &b))
	page := b.String()
	for _, f := range cloud {
		f.Hidden = false
	}
	extra := manCloudOptions(cloud) + manEnvironment(c) + manFiles + "\n.SH EXIT STATUS\n" + manRows(exitStatusText())
	// Before SEE ALSO, where a reader looks for them.
	if i := strings.Index(page, "\n.SH SEE ALSO\n"); i >= 0 {
		return page[:i+1] + extra + page[i+1:]
	}
	return page + extra
}

// roff escapes text for a man page line.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func manCloudOptions(flags []*pflag.Flag) string {
	if len(flags) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(".SH CLOUD OPTIONS\n.PP\nThe OpenStack flags (see also \\fBbrick help auth\\fP); each also reads the variable named.\n")
	for _, f := range flags {
		arg := ""
		if f.Value.Type() != "bool" {
			arg = `=\fI` + f.Value.Type() + `\fP`
		}
		env := strings.Join(append([]string{settings.EnvName(f.Name)}, f.Annotations[settings.EnvAnnotation]...), ", ")
		fmt.Fprintf(&b, ".PP\n\\fB--%s\\fP%s\n.RS\n%s (%s)\n.RE\n", f.Name, arg, roff(f.Usage), env)
	}
	return b.String()
}

// manEnvironment lists the variables c reads besides its flags' BRICK_*.
func manEnvironment(c *cobra.Command) string {
	var b strings.Builder
	b.WriteString(".SH ENVIRONMENT\n")
	rows := [][2]string{
		{"BRICK_\\fIFLAG\\fP", "any flag's value, the flag's name in capitals with - as _ (BRICK_HOST_ROOT for --host-root); flags win over variables, variables over the config file"},
		{"BRICK_CONFIG", "the configuration file, instead of " + settings.DefaultFile},
	}
	if c.Flags().Lookup("os-cloud") != nil {
		rows = append(rows, [2]string{"OS_CLOUD, OS_AUTH_URL, OS_PASSWORD, ...", "openstackclient's variables, read after BRICK_* (see CLOUD OPTIONS)"})
	}
	if c.Flags().Lookup("max-width") != nil {
		rows = append(rows, [2]string{"CLIFF_MAX_TERM_WIDTH, CLIFF_FIT_WIDTH, COLUMNS", "table width, as openstackclient reads them"})
	}
	for _, r := range rows {
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", r[0], roff(r[1]))
	}
	return b.String()
}

const manFiles = `.SH FILES
.TP
\fB` + settings.DefaultFile + `\fP
configuration: keys are flag names (--config, BRICK_CONFIG)
.TP
\fB/var/lib/brick/volumes/\fP
brick's record of each attachment (0600, no secrets)
.TP
\fB/run/lock/brick/\fP
one lock per volume, naming the brick process that holds it
.TP
\fB./clouds.yaml\fP, \fB~/.config/openstack/clouds.yaml\fP, \fB/etc/openstack/clouds.yaml\fP
clouds for --os-cloud, first found wins
`

// manRows turns "  N  meaning" lines into tagged paragraphs.
func manRows(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		code, meaning, _ := strings.Cut(strings.TrimSpace(line), "  ")
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", code, roff(strings.TrimSpace(meaning)))
	}
	return b.String()
}

// availableCommands lists root and every command a user can run under it.
func availableCommands(root *cobra.Command) []*cobra.Command {
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return all
}
