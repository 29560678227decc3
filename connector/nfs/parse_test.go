package nfs

import (
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/connector"
)

func TestParseExport(t *testing.T) {
	tests := []struct {
		in      string
		want    string // canonical String(); "" means an error is expected
		wantErr string
	}{
		{in: "10.0.0.1:/exports/vol", want: "10.0.0.1:/exports/vol"},
		{in: "NFS.Example.com:/a/b/", want: "nfs.example.com:/a/b"},
		{in: "server:/a//b", want: "server:/a/b"},
		{in: "server:/", want: "server:/"},
		{in: "[fd00::1]:/x", want: "[fd00::1]:/x"},
		{in: "[FD00:0::1]:/x", want: "[fd00::1]:/x"},
		{in: "[fe80::1%eth0]:/x", want: "[fe80::1%eth0]:/x"},
		{in: "[::ffff:10.0.0.1]:/x", want: "[::ffff:10.0.0.1]:/x"},
		{in: "srv-1.lab:/vol_a/v-1.2+x@y~z=w,q:r", want: "srv-1.lab:/vol_a/v-1.2+x@y~z=w,q:r"},
		// Cinder's remotefs (nfs.py, nfs_shares_config) writes a space as \040.
		{in: `nfs-host:/export\040this`, want: "nfs-host:/export this"},
		{in: `10.0.0.1:/my\040vols/\040lead\040/x`, want: "10.0.0.1:/my vols/ lead /x"},
		{in: `[fd00::1]:/a\040b`, want: "[fd00::1]:/a b"},
		{in: `server:/a\0401`, want: "server:/a 1"},
		{in: `server:/a\04`, wantErr: "not allowed"},
		{in: `server:/a\011b`, wantErr: "not allowed"},
		{in: `server:/a\012b`, wantErr: "not allowed"},
		{in: `server:/a\134040`, wantErr: "not allowed"},
		{in: `server\040x:/a`, wantErr: "host name"},
		{in: "", wantErr: "missing"},
		{in: "server", wantErr: "want host:/path"},
		{in: "server:relative", wantErr: "must be absolute"},
		{in: "fd00::1:/x", wantErr: "brackets"},
		{in: "::1:/x", wantErr: "brackets"},
		{in: "[fd00::1]/x", wantErr: "want [IPv6]:/path"},
		{in: "[fd00::1:/x", wantErr: "unterminated"},
		{in: "[10.0.0.1]:/x", wantErr: "not an IPv6 address"},
		{in: "[zz]:/x", wantErr: "not an IPv6 address"},
		{in: "[fe80::1%-x]:/x", wantErr: "zone"},
		{in: "-o:/x", wantErr: "host name"},
		{in: "-oremount:/x", wantErr: "host name"},
		{in: ":/x", wantErr: "empty"},
		{in: "ho st:/x", wantErr: "host name"},
		{in: "host_1:/x", wantErr: "host name"},
		{in: "a..b:/x", wantErr: "host name"},
		{in: "server:/a/../b", wantErr: `".." component`},
		{in: "server:/..", wantErr: `".." component`},
		{in: "server:/a/./b", wantErr: `"." component`},
		// remotefs.py _load_shares_config decodes \040 before the share
		// reaches initialize_connection: the export carries a real space.
		{in: "server:/a b", want: "server:/a b"},
		{in: "server:/ a /b ", want: "server:/ a /b "},
		{in: "server:/a\tb", wantErr: "not allowed"},
		{in: "server:/a\nb", wantErr: "not allowed"},
		{in: "server:/a;b", wantErr: "not allowed"},
		{in: "server:/$(id)", wantErr: "not allowed"},
		{in: "server:/a\\b", wantErr: "not allowed"},
		{in: "server:/a*", wantErr: "not allowed"},
		{in: "server:/" + strings.Repeat("a", 300), wantErr: "longer than"},
		{in: strings.Repeat("a", 2000), wantErr: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := ParseExport(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				require.ErrorIs(t, err, connector.ErrInvalid)
				require.Contains(t, err.Error(), `"export"`)
				require.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, e.String())
			require.Len(t, e.ID(), 32)
		})
	}
	a, _ := ParseExport("server:/a/")
	b, _ := ParseExport("SERVER:/a")
	require.Equal(t, a.ID(), b.ID(), "spellings of one export share a mount point")
}

func TestParseName(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{in: "volume-9a2b6c8e-0f0e-4c55-9d7e-3f1b2a4c5d6e"},
		{in: "volume-1.snap-2"},
		{in: "dir/volume_1+x@y"},
		{in: "", wantErr: "missing"},
		{in: "/etc/shadow", wantErr: "relative"},
		{in: "..", wantErr: `".." component`},
		{in: "../x", wantErr: `".." component`},
		{in: "a/../b", wantErr: `".." component`},
		{in: "a/./b", wantErr: `"." component`},
		{in: "-o", wantErr: "starts with"},
		{in: "a/-b", wantErr: "starts with"},
		{in: ".hidden", wantErr: "starts with"},
		{in: "a//b", wantErr: "empty component"},
		{in: "a/", wantErr: "empty component"},
		{in: "a b", wantErr: "not allowed"},
		{in: "a,b", wantErr: "not allowed"},
		{in: "a:b", wantErr: "not allowed"},
		{in: "a\x00b", wantErr: "not allowed"},
		{in: strings.Repeat("a/", 20) + "a", wantErr: "components"},
		{in: strings.Repeat("a", 256), wantErr: "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseName(tt.in)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, connector.ErrInvalid)
				require.Contains(t, err.Error(), `"name"`)
				require.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.in, got)
		})
	}
}

func TestParseMountOptions(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: "   ", want: nil},
		{in: "-o vers=3,nolock", want: []string{"vers=3", "nolock"}},
		{in: "-o vers=4.1 -o sec=krb5:krb5i", want: []string{"vers=4.1", "sec=krb5:krb5i"}},
		{in: "-overs=4.2,hard", want: []string{"vers=4.2", "hard"}},
		{in: "nfsvers=3,rsize=1048576,", want: []string{"nfsvers=3", "rsize=1048576"}},
		{in: "clientaddr=fd00::2,proto=tcp6,fsc,fsc=tag", want: []string{"clientaddr=fd00::2", "proto=tcp6", "fsc", "fsc=tag"}},
		{in: "-t nfs4", wantErr: "only -o OPTIONS"},
		{in: "--bind", wantErr: "only -o OPTIONS"},
		{in: "-o vers=3 -o", wantErr: "-o without options"},
		{in: "-o", wantErr: "-o without options"},
		{in: "uhelper=evil", wantErr: "not allowed"},
		{in: "helper=evil", wantErr: "not allowed"},
		{in: "X-mount.mkdir", wantErr: "not allowed"},
		{in: "bg", wantErr: "not allowed"},
		{in: "loop", wantErr: "not allowed"},
		{in: "remount", wantErr: "not allowed"},
		{in: "/dev/sda", wantErr: "not allowed"},
		{in: "server:/other", wantErr: "not allowed"},
		{in: "vers=5", wantErr: "want 3, 4"},
		{in: "vers=2", wantErr: "want 3, 4"},
		{in: "minorversion=7", wantErr: "minorversion"},
		{in: "hard=1", wantErr: "takes no value"},
		{in: "sec", wantErr: "needs a value"},
		{in: "sec=", wantErr: "needs a value"},
		{in: "addr=$(id)", wantErr: "not allowed in the value"},
		{in: "addr=a;b", wantErr: "not allowed in the value"},
		{in: "mounthost=-x", wantErr: "starts with '-'"},
		{in: "addr=" + strings.Repeat("1", 300), wantErr: "longer than"},
		{in: strings.Repeat("hard,", 70), wantErr: "more than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMountOptions("options", tt.in)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, connector.ErrInvalid)
				require.Contains(t, err.Error(), `"options"`)
				require.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestParseVolume(t *testing.T) {
	info, err := connector.ParseConnectionInfo([]byte(`{"driver_volume_type":"nfs","data":{
		"export":"10.0.0.5:/srv/cinder","name":"volume-1","options":"-o vers=3",
		"format":"raw","access_mode":"ro","qos_specs":null,"encrypted":false}}`))
	require.NoError(t, err)
	v, err := ParseVolume(info)
	require.NoError(t, err)
	require.Equal(t, "10.0.0.5:/srv/cinder", v.Export.String())
	require.Equal(t, "volume-1", v.Name)
	require.Equal(t, []string{"vers=3"}, v.Options)
	require.Equal(t, "raw", v.Format)
	require.True(t, v.ReadOnly)

	// Keys NFS never reads cannot fail it (Cinder's nfs.py sends
	// volume_id, qos_specs, discard...).
	info, err = connector.ParseConnectionInfo([]byte(`{"driver_volume_type":"nfs","data":{"export":"h:/x","name":"v","volume_id":1,"qos_specs":{"a":1},"discard":"x","target_lun":-1}}`))
	require.NoError(t, err)
	_, err = ParseVolume(info)
	require.NoError(t, err)

	for key, bad := range map[string]string{
		"export":      `{"export":5,"name":"v"}`,
		"name":        `{"export":"h:/x","name":"../v"}`,
		"options":     `{"export":"h:/x","name":"v","options":"-t tmpfs"}`,
		"format":      `{"export":"h:/x","name":"v","format":"Q C"}`,
		"access_mode": `{"export":"h:/x","name":"v","access_mode":"rwx"}`,
	} {
		info, err := connector.ParseConnectionInfo([]byte(`{"driver_volume_type":"nfs","data":` + bad + `}`))
		require.NoError(t, err)
		_, err = ParseVolume(info)
		require.ErrorIs(t, err, connector.ErrInvalid, key)
		var ie *connector.InvalidError
		require.True(t, errors.As(err, &ie), key)
		require.Equal(t, key, ie.Key)
	}
}

func FuzzParseExport(f *testing.F) {
	for _, s := range []string{"10.0.0.1:/exports/vol", "[fd00::1]:/x", "[fe80::1%eth0]:/", "h:/a/../b", "-o:/x", "host:/a b", "::1:/x", `h:/a\040b`, `h:/a\04`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExport(s)
		if err != nil {
			if !errors.Is(err, connector.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		src := e.String()
		// The only white space allowed is a space, decoded from \040.
		if strings.HasPrefix(src, "-") || strings.ContainsFunc(src, func(r rune) bool { return r != ' ' && unicode.IsSpace(r) }) || strings.ContainsRune(src, 0) {
			t.Fatalf("unsafe mount source %q from %q", src, s)
		}
		if strings.Contains(e.Host, " ") {
			t.Fatalf("space in host %q from %q", e.Host, s)
		}
		if strings.Contains(e.Path, "/../") || strings.HasSuffix(e.Path, "/..") || !strings.HasPrefix(e.Path, "/") {
			t.Fatalf("bad path %q from %q", e.Path, s)
		}
		again, err := ParseExport(strings.ReplaceAll(src, " ", `\040`))
		if err != nil || again != e {
			t.Fatalf("canonical form %q does not parse back: %v %+v", src, err, again)
		}
	})
}

func FuzzParseName(f *testing.F) {
	for _, s := range []string{"volume-1", "a/b", "../x", "-o", ".x", "a//b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseName(s)
		if err != nil {
			return
		}
		for _, c := range strings.Split(n, "/") {
			if c == "" || c == "." || c == ".." || c[0] == '-' || c[0] == '.' {
				t.Fatalf("accepted unsafe name %q", s)
			}
		}
		if strings.ContainsFunc(n, unicode.IsSpace) {
			t.Fatalf("accepted white space in %q", s)
		}
	})
}

func FuzzParseMountOptions(f *testing.F) {
	for _, s := range []string{"-o vers=3,nolock", "-o a -o b", "-overs=4.2", "vers=3,", "-t nfs", "addr=$(x)", "-o", "fsc=x,fsc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		opts, err := ParseMountOptions("options", s)
		if err != nil {
			if !errors.Is(err, connector.ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		for _, o := range opts {
			name, value, _ := strings.Cut(o, "=")
			if _, ok := allowedOptions()[name]; !ok {
				t.Fatalf("accepted unknown option %q from %q", o, s)
			}
			if strings.ContainsAny(o, ", \t\n\x00") || strings.HasPrefix(o, "-") || strings.Contains(value, "=") {
				t.Fatalf("accepted unsafe option %q from %q", o, s)
			}
		}
	})
}
