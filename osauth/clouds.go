package osauth

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/brick-storage/brick/secret"
)

// cloud is one clouds.yaml entry: the keys brick reads, named as
// openstacksdk and gophercloud name them. brick decodes them itself so the
// binary links neither gophercloud's clouds package nor the second YAML
// library it brings, whose initialisers cost every command, get-connector
// included. Keys brick does not read are not decoded.
type cloud struct {
	AuthInfo     *cloudAuth `yaml:"auth"`
	AuthType     string     `yaml:"auth_type"`
	RegionName   string     `yaml:"region_name"`
	EndpointType string     `yaml:"endpoint_type"`
	Interface    string     `yaml:"interface"`
	CACertFile   string     `yaml:"cacert"`
	Verify       *bool      `yaml:"verify"`

	VolumeAPIVersion string `yaml:"volume_api_version"`
	// BlockStorageAPIVersion is openstacksdk's name for
	// volume_api_version; it wins when both are set.
	BlockStorageAPIVersion string `yaml:"block_storage_api_version"`

	BlockStorageEndpointOverride string `yaml:"block_storage_endpoint_override"`
	VolumeEndpointOverride       string `yaml:"volume_endpoint_override"`
	BaremetalEndpointOverride    string `yaml:"baremetal_endpoint_override"`

	// misspelt names keys that look like one of the above but are not.
	misspelt []string
}

// cloudAuth is a clouds.yaml entry's auth section.
type cloudAuth struct {
	AuthURL string `yaml:"auth_url"`
	// Endpoint is openstacksdk's URL of a standalone Ironic.
	Endpoint string `yaml:"endpoint"`

	Username       string `yaml:"username"`
	UserID         string `yaml:"user_id"`
	Password       string `yaml:"password"`
	UserDomainName string `yaml:"user_domain_name"`
	UserDomainID   string `yaml:"user_domain_id"`

	ProjectName       string `yaml:"project_name"`
	ProjectID         string `yaml:"project_id"`
	ProjectDomainName string `yaml:"project_domain_name"`
	ProjectDomainID   string `yaml:"project_domain_id"`
	DomainName        string `yaml:"domain_name"`
	DomainID          string `yaml:"domain_id"`
	DefaultDomain     string `yaml:"default_domain"`

	Token string `yaml:"token"`

	ApplicationCredentialID     string `yaml:"application_credential_id"`
	ApplicationCredentialName   string `yaml:"application_credential_name"`
	ApplicationCredentialSecret string `yaml:"application_credential_secret"`
}

// auth returns the auth section, empty when the entry has none.
func (c cloud) auth() cloudAuth {
	if c.AuthInfo == nil {
		return cloudAuth{}
	}
	return *c.AuthInfo
}

// cloudsFile holds the entries undecoded, so secure.yaml can be laid over
// clouds.yaml key by key before anything is interpreted.
type cloudsFile struct {
	Clouds map[string]yaml.Node `yaml:"clouds"`
}

// defaultCloudsFiles are openstacksdk's search locations, in its order;
// OS_CLIENT_CONFIG_FILE, when set, is the only one (as in openstackclient
// and gophercloud).
func defaultCloudsFiles() []string {
	if p := os.Getenv("OS_CLIENT_CONFIG_FILE"); p != "" {
		return []string{filepath.Clean(p)}
	}
	var out []string
	if cwd, err := os.Getwd(); err == nil {
		out = append(out, filepath.Join(cwd, "clouds.yaml"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "openstack", "clouds.yaml"))
	} else if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".config", "openstack", "clouds.yaml"))
	}
	return append(out, "/etc/openstack/clouds.yaml")
}

// loadCloud finds the named cloud in the first clouds.yaml that exists and
// lays the same entry of secure.yaml (same directory) over it. Files the
// trust refuses are errors, not skipped: skipping would pick another cloud.
func loadCloud(name string, files []string, trust FileTrust, log *slog.Logger) (cloud, error) {
	if len(files) == 0 {
		files = defaultCloudsFiles()
	}
	for _, path := range files {
		entry, found, err := readCloud(path, name, trust, log)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return cloud{}, err
		}
		if !found {
			return cloud{}, unknownCloud(name, path, cloudNames(path, trust))
		}
		secure := filepath.Join(filepath.Dir(path), "secure.yaml")
		over, found, err := readCloud(secure, name, trust, log)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return cloud{}, err
		}
		if found {
			overlay(&entry, &over)
		}
		c, err := decodeCloud(&entry)
		if err != nil {
			return cloud{}, fmt.Errorf("%w: parse %s: %w", ErrConfig, path, err)
		}
		if c.misspelt = misspelt(&entry); len(c.misspelt) > 0 && log != nil {
			log.Warn(fmt.Sprintf("%s: cloud %q: brick does not read %s: misspelt?", path, name, strings.Join(c.misspelt, ", ")))
		}
		return c, nil
	}
	return cloud{}, fmt.Errorf("%w: cloud %q: no clouds.yaml found (tried %s)", ErrConfig, name, strings.Join(files, ", "))
}

// readCloud reads one clouds.yaml or secure.yaml the trust accepts and
// returns the named entry, warning when it holds a secret others can read.
// A missing file's error wraps fs.ErrNotExist.
func readCloud(path, name string, trust FileTrust, log *slog.Logger) (yaml.Node, bool, error) {
	data, readable, err := trust.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return yaml.Node{}, false, err
	}
	if err != nil {
		return yaml.Node{}, false, fmt.Errorf("%w: read %s: %w", ErrConfig, path, err)
	}
	entry, found, err := findCloud(data, name)
	if err != nil {
		return yaml.Node{}, false, fmt.Errorf("%w: parse %s: %w", ErrConfig, path, err)
	}
	if found && readable {
		if c, err := decodeCloud(&entry); err == nil {
			if a := c.auth(); a.Password != "" || a.Token != "" || a.ApplicationCredentialSecret != "" {
				WarnReadable(log, path, "a password")
			}
		}
	}
	return entry, found, nil
}

// findCloud returns the named entry of one clouds.yaml document, undecoded.
func findCloud(data []byte, name string) (yaml.Node, bool, error) {
	var f cloudsFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return yaml.Node{}, false, err
	}
	n, ok := f.Clouds[name]
	return n, ok, nil
}

// cloudNames lists the entries of a clouds.yaml, for an error naming them.
func cloudNames(path string, trust FileTrust) []string {
	data, _, err := trust.ReadFile(path)
	var f cloudsFile
	if err != nil || yaml.Unmarshal(data, &f) != nil {
		return nil
	}
	return slices.Collect(maps.Keys(f.Clouds))
}

// decodeCloud decodes one (merged) entry.
func decodeCloud(n *yaml.Node) (cloud, error) {
	var c cloud
	if err := n.Decode(&c); err != nil {
		return cloud{}, err
	}
	return c, nil
}

// parseCloud returns the named cloud of one clouds.yaml document.
func parseCloud(data []byte, name string) (cloud, bool, error) {
	n, found, err := findCloud(data, name)
	if err != nil || !found {
		return cloud{}, found, err
	}
	c, err := decodeCloud(&n)
	return c, err == nil, err
}

// overlay lays the mapping over onto base: secure.yaml wins for every key
// it sets to a non-empty value, mappings on both sides merge key by key.
// Working on the YAML itself, no key can be forgotten; aliases are values,
// never followed.
func overlay(base, over *yaml.Node) {
	if base.Kind != yaml.MappingNode || over.Kind != yaml.MappingNode {
		if over.Kind != 0 && !emptyScalar(over) {
			*base = *over
		}
		return
	}
	for i := 0; i+1 < len(over.Content); i += 2 {
		k, v := over.Content[i], over.Content[i+1]
		if emptyScalar(v) {
			continue
		}
		j := keyIndex(base, k.Value)
		switch {
		case j < 0:
			base.Content = append(base.Content, k, v)
		case base.Content[j+1].Kind == yaml.MappingNode && v.Kind == yaml.MappingNode:
			overlay(base.Content[j+1], v)
		default:
			base.Content[j+1] = v
		}
	}
}

func emptyScalar(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && (n.Value == "" || n.Tag == "!!null")
}

// keyIndex is the index of key's key node in mapping m, or -1.
func keyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// applyCloud fills the options not given explicitly from the cloud entry.
// This is the one place that maps clouds.yaml keys onto Options.
func applyCloud(o Options, c cloud) Options {
	a := c.auth()
	o.Redactor.Add(a.Password, a.Token, a.ApplicationCredentialSecret) // decoded as plain strings
	o.AuthType = cmp.Or(o.AuthType, c.AuthType)
	o.AuthURL = cmp.Or(o.AuthURL, a.AuthURL)
	o.Username = cmp.Or(o.Username, a.Username)
	o.UserID = cmp.Or(o.UserID, a.UserID)
	o.Password = o.Password.Or(secret.New(a.Password))
	o.ProjectID = cmp.Or(o.ProjectID, a.ProjectID)
	o.ProjectName = cmp.Or(o.ProjectName, a.ProjectName)
	o.UserDomainName = cmp.Or(o.UserDomainName, a.UserDomainName)
	o.UserDomainID = cmp.Or(o.UserDomainID, a.UserDomainID)
	o.ProjectDomainName = cmp.Or(o.ProjectDomainName, a.ProjectDomainName)
	o.ProjectDomainID = cmp.Or(o.ProjectDomainID, a.ProjectDomainID)
	o.DomainName = cmp.Or(o.DomainName, a.DomainName)
	o.DomainID = cmp.Or(o.DomainID, a.DomainID)
	o.DefaultDomain = cmp.Or(o.DefaultDomain, a.DefaultDomain)
	o.Token = o.Token.Or(secret.New(a.Token))
	o.AppCredID = cmp.Or(o.AppCredID, a.ApplicationCredentialID)
	o.AppCredName = cmp.Or(o.AppCredName, a.ApplicationCredentialName)
	o.AppCredSecret = o.AppCredSecret.Or(secret.New(a.ApplicationCredentialSecret))
	o.RegionName = cmp.Or(o.RegionName, c.RegionName)
	o.Interface = cmp.Or(o.Interface, c.Interface, c.EndpointType)
	o.CACert = cmp.Or(o.CACert, c.CACertFile)
	o.CinderEndpoint = cmp.Or(o.CinderEndpoint, c.BlockStorageEndpointOverride, c.VolumeEndpointOverride)
	o.IronicEndpoint = cmp.Or(o.IronicEndpoint, c.BaremetalEndpointOverride)
	o.misspelt = c.misspelt
	if c.Verify != nil && !*c.Verify {
		o.Insecure = true
	}
	// auth_type none + auth.endpoint is how openstacksdk spells a
	// standalone Ironic.
	if t, _ := normalizeAuthType(c.AuthType); t == AuthNoAuth || t == AuthHTTPBasic {
		o.IronicEndpoint = cmp.Or(o.IronicEndpoint, a.Endpoint)
	}
	return o
}

// volumeAPIVersion maps clouds.yaml's block_storage_api_version (or
// volume_api_version) onto brick's forced Cinder microversion. "3", the
// major version as openstackclient reads it, leaves the microversion to
// negotiation; "3.N" forces it, as --os-volume-api-version does; another
// major version is refused, since brick speaks Block Storage v3 only.
func volumeAPIVersion(name string, c cloud) (string, error) {
	key, v := "block_storage_api_version", strings.TrimSpace(c.BlockStorageAPIVersion)
	if v == "" {
		key, v = "volume_api_version", strings.TrimSpace(c.VolumeAPIVersion)
	}
	major, minor, hasMinor := strings.Cut(v, ".")
	switch {
	case v == "" || v == "3":
		return "", nil
	case major == "3" && hasMinor && minor != "" && strings.Trim(minor, "0123456789") == "":
		return v, nil
	}
	return "", fmt.Errorf("%w: cloud %q: %s %q: brick speaks the Block Storage (Cinder) API v3 only; set 3 (negotiate the microversion), 3.N to force one, or remove the key",
		ErrConfig, name, key, v)
}

// Resolve returns the options with the clouds.yaml entry (if Cloud is set)
// filled in under the explicitly given values, the auth type normalised
// and defaults applied. It reports configuration mistakes as ErrConfig.
func Resolve(o Options) (Options, error) {
	if o.Cloud != "" {
		c, err := loadCloud(o.Cloud, o.CloudsFiles, o.trust(), o.Log)
		if err != nil {
			return o, err
		}
		o = applyCloud(o, c)
		if o.VolumeAPIVersion == "" {
			if o.VolumeAPIVersion, err = volumeAPIVersion(o.Cloud, c); err != nil {
				return o, err
			}
		}
	}
	o.Redactor.AddValues(o.secrets()...)
	t, err := normalizeAuthType(o.AuthType)
	if err != nil {
		return o, err
	}
	if t == "" {
		switch {
		case !o.Token.IsZero():
			t = AuthToken
		case o.AppCredID != "" || o.AppCredName != "":
			t = AuthApplicationCredential
		case o.AuthURL != "":
			t = AuthPassword
		default:
			t, o.noCredentials = AuthNoAuth, true
		}
	}
	o.AuthType = t
	o.DefaultDomain = cmp.Or(o.DefaultDomain, DefaultDomain)
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o, nil
}
