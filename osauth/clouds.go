package osauth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// cloudsFile is the part of clouds.yaml brick reads. gophercloud's
// config/clouds drops auth_type and the endpoint overrides a standalone
// Cinder or Ironic needs, so brick reads the file itself.
type cloudsFile struct {
	Clouds map[string]cloud `yaml:"clouds"`
}

type cloud struct {
	AuthType                     string    `yaml:"auth_type"`
	Auth                         cloudAuth `yaml:"auth"`
	RegionName                   string    `yaml:"region_name"`
	Interface                    string    `yaml:"interface"`
	EndpointType                 string    `yaml:"endpoint_type"`
	Verify                       *bool     `yaml:"verify"`
	CACert                       string    `yaml:"cacert"`
	BlockStorageEndpointOverride string    `yaml:"block_storage_endpoint_override"`
	VolumeEndpointOverride       string    `yaml:"volume_endpoint_override"`
	BaremetalEndpointOverride    string    `yaml:"baremetal_endpoint_override"`
	BlockStorageAPIVersion       string    `yaml:"block_storage_api_version"`
	VolumeAPIVersion             string    `yaml:"volume_api_version"`
}

type cloudAuth struct {
	AuthURL           string `yaml:"auth_url"`
	Endpoint          string `yaml:"endpoint"`
	Username          string `yaml:"username"`
	UserID            string `yaml:"user_id"`
	Password          string `yaml:"password"`
	ProjectID         string `yaml:"project_id"`
	ProjectName       string `yaml:"project_name"`
	UserDomainName    string `yaml:"user_domain_name"`
	UserDomainID      string `yaml:"user_domain_id"`
	ProjectDomainName string `yaml:"project_domain_name"`
	ProjectDomainID   string `yaml:"project_domain_id"`
	DomainName        string `yaml:"domain_name"`
	DomainID          string `yaml:"domain_id"`
	Token             string `yaml:"token"`
	AppCredID         string `yaml:"application_credential_id"`
	AppCredName       string `yaml:"application_credential_name"`
	AppCredSecret     string `yaml:"application_credential_secret"`
}

// defaultCloudsFiles are openstacksdk's search locations, in its order.
func defaultCloudsFiles() []string {
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
// merges secure.yaml from the same directory over it.
func loadCloud(name string, files []string) (cloud, error) {
	if len(files) == 0 {
		files = defaultCloudsFiles()
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return cloud{}, fmt.Errorf("%w: read %s: %w", ErrConfig, path, err)
		}
		c, found, err := parseCloud(data, name)
		if err != nil {
			return cloud{}, fmt.Errorf("%w: parse %s: %w", ErrConfig, path, err)
		}
		if !found {
			return cloud{}, fmt.Errorf("%w: cloud %q not found in %s", ErrConfig, name, path)
		}
		secure := filepath.Join(filepath.Dir(path), "secure.yaml")
		if data, err := os.ReadFile(secure); err == nil {
			s, found, err := parseCloud(data, name)
			if err != nil {
				return cloud{}, fmt.Errorf("%w: parse %s: %w", ErrConfig, secure, err)
			}
			if found {
				c = mergeCloud(c, s)
			}
		}
		return c, nil
	}
	return cloud{}, fmt.Errorf("%w: cloud %q: no clouds.yaml found (tried %v)", ErrConfig, name, files)
}

// parseCloud returns the named cloud of one clouds.yaml document.
func parseCloud(data []byte, name string) (cloud, bool, error) {
	var f cloudsFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return cloud{}, false, err
	}
	c, ok := f.Clouds[name]
	return c, ok, nil
}

// mergeCloud fills c's empty fields from over's non-empty ones (secure.yaml
// wins for the values it has).
func mergeCloud(c, over cloud) cloud {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&c.AuthType, over.AuthType)
	set(&c.RegionName, over.RegionName)
	set(&c.Interface, over.Interface)
	set(&c.CACert, over.CACert)
	set(&c.BlockStorageEndpointOverride, over.BlockStorageEndpointOverride)
	set(&c.BaremetalEndpointOverride, over.BaremetalEndpointOverride)
	if over.Verify != nil {
		c.Verify = over.Verify
	}
	a, o := &c.Auth, over.Auth
	set(&a.AuthURL, o.AuthURL)
	set(&a.Endpoint, o.Endpoint)
	set(&a.Username, o.Username)
	set(&a.UserID, o.UserID)
	set(&a.Password, o.Password)
	set(&a.ProjectID, o.ProjectID)
	set(&a.ProjectName, o.ProjectName)
	set(&a.UserDomainName, o.UserDomainName)
	set(&a.UserDomainID, o.UserDomainID)
	set(&a.ProjectDomainName, o.ProjectDomainName)
	set(&a.ProjectDomainID, o.ProjectDomainID)
	set(&a.DomainName, o.DomainName)
	set(&a.DomainID, o.DomainID)
	set(&a.Token, o.Token)
	set(&a.AppCredID, o.AppCredID)
	set(&a.AppCredName, o.AppCredName)
	set(&a.AppCredSecret, o.AppCredSecret)
	return c
}

// Resolve returns the options with the clouds.yaml entry (if Cloud is set)
// filled in under the explicitly given values, the auth type normalised
// and defaults applied. It reports configuration mistakes as ErrConfig.
func Resolve(o Options) (Options, error) {
	if o.Cloud != "" {
		c, err := loadCloud(o.Cloud, o.CloudsFiles)
		if err != nil {
			return o, err
		}
		o.Redactor.Add(c.Auth.Password, c.Auth.Token, c.Auth.AppCredSecret)
		def := func(dst *string, vals ...string) {
			for _, v := range vals {
				if *dst == "" && v != "" {
					*dst = v
				}
			}
		}
		a := c.Auth
		def(&o.AuthType, c.AuthType)
		def(&o.AuthURL, a.AuthURL)
		def(&o.Username, a.Username)
		def(&o.UserID, a.UserID)
		def(&o.Password, a.Password)
		def(&o.ProjectID, a.ProjectID)
		def(&o.ProjectName, a.ProjectName)
		def(&o.UserDomainName, a.UserDomainName)
		def(&o.UserDomainID, a.UserDomainID)
		def(&o.ProjectDomainName, a.ProjectDomainName)
		def(&o.ProjectDomainID, a.ProjectDomainID)
		def(&o.DomainName, a.DomainName)
		def(&o.DomainID, a.DomainID)
		def(&o.Token, a.Token)
		def(&o.AppCredID, a.AppCredID)
		def(&o.AppCredName, a.AppCredName)
		def(&o.AppCredSecret, a.AppCredSecret)
		def(&o.RegionName, c.RegionName)
		def(&o.Interface, c.Interface, c.EndpointType)
		def(&o.CACert, c.CACert)
		def(&o.CinderEndpoint, c.BlockStorageEndpointOverride, c.VolumeEndpointOverride)
		def(&o.IronicEndpoint, c.BaremetalEndpointOverride)
		if c.Verify != nil && !*c.Verify {
			o.Insecure = true
		}
		// auth_type none + auth.endpoint is how openstacksdk spells a
		// standalone Ironic.
		if t, _ := normalizeAuthType(c.AuthType); t == AuthNoAuth || t == AuthHTTPBasic {
			def(&o.IronicEndpoint, a.Endpoint)
		}
	}
	o.Redactor.Add(o.secrets()...)
	t, err := normalizeAuthType(o.AuthType)
	if err != nil {
		return o, err
	}
	if t == "" {
		switch {
		case o.Token != "":
			t = AuthToken
		case o.AppCredID != "" || o.AppCredName != "":
			t = AuthApplicationCredential
		case o.AuthURL != "":
			t = AuthPassword
		default:
			t = AuthNoAuth
		}
	}
	o.AuthType = t
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o, nil
}
