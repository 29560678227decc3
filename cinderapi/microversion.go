package cinderapi

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ident"
)

// Microversion is a Block Storage API version "3.N".
type Microversion struct{ Major, Minor int }

// Microversions that change what brick does.
var (
	// MVAttachments: /attachments exists.
	MVAttachments = Microversion{3, 27}
	// MVComplete: os-complete exists; brick's v3 flow needs it.
	MVComplete = Microversion{3, 44}
	// MVMode: attachment create accepts "mode".
	MVMode = Microversion{3, 54}
	// MVBase is the lowest v3 version.
	MVBase = Microversion{3, 0}
)

// badVersion refuses a microversion given by the user.
func badVersion(why string) error {
	return &apierr.Error{Kind: apierr.ErrUnsupported, Message: kindText(apierr.ErrUnsupported) + ": " + why}
}

// ParseMicroversion parses "3.44" (gophercloud's parser); "latest" is
// refused (brick pins the versions whose behaviour it knows), and so is any
// major version but 3.
func ParseMicroversion(s string) (Microversion, error) {
	major, minor, err := utils.ParseMicroversion(strings.TrimSpace(s))
	if err != nil || major < 0 || minor < 0 {
		return Microversion{}, badVersion(fmt.Sprintf("%q is not MAJOR.MINOR (e.g. 3.44)", ident.Clip(s, 32)))
	}
	if major != 3 {
		return Microversion{}, badVersion(s + ": brick speaks the Block Storage API v3 only")
	}
	return Microversion{major, minor}, nil
}

func (m Microversion) String() string { return fmt.Sprintf("%d.%d", m.Major, m.Minor) }

// AtLeast reports m >= o.
func (m Microversion) AtLeast(o Microversion) bool {
	return m.Major > o.Major || (m.Major == o.Major && m.Minor >= o.Minor)
}

// IsZero reports an unknown version.
func (m Microversion) IsZero() bool { return m == Microversion{} }

// discover reads the server's v3 microversion range from the version
// document at the service root; zero values when it advertises none.
func discover(ctx context.Context, sc *gophercloud.ServiceClient) (lo, hi Microversion, err error) {
	versions, err := utils.GetServiceVersions(ctx, sc.ProviderClient, versionRoot(sc.Endpoint), true)
	if err != nil {
		return lo, hi, mapError("version discovery", "", err)
	}
	for _, v := range versions {
		if v.Major == 3 && v.MaxMajor == 3 {
			lo, hi = Microversion{v.MinMajor, v.MinMinor}, Microversion{v.MaxMajor, v.MaxMinor}
		}
	}
	return lo, hi, nil
}

// pick chooses the version: forced (within the range), else 3.54 (v3
// flow with mode), 3.44 (v3 flow), or the server's maximum (legacy flow).
func pick(forced, lo, hi Microversion) (Microversion, error) {
	switch {
	case !forced.IsZero():
		supported := utils.SupportedMicroversions{MinMajor: lo.Major, MinMinor: lo.Minor, MaxMajor: hi.Major, MaxMinor: hi.Minor}
		if ok, _ := supported.IsSupported(forced.String()); !hi.IsZero() && !ok {
			return forced, &apierr.Error{Service: Service, Op: "microversion", Kind: apierr.ErrUnsupported,
				Message: fmt.Sprintf("this Cinder supports %s to %s, not %s", lo, hi, forced)}
		}
		return forced, nil
	case hi.IsZero():
		// No microversion support advertised: plain v3.
		return MVBase, nil
	case hi.AtLeast(MVMode):
		return MVMode, nil
	case hi.AtLeast(MVComplete):
		return MVComplete, nil
	}
	return hi, nil
}

// versionRoot cuts the endpoint at its last /vN path segment, where the
// version document is: http://h:8776/v3/abc/ -> http://h:8776/.
func versionRoot(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if len(parts[i]) >= 2 && parts[i][0] == 'v' && parts[i][1] >= '0' && parts[i][1] <= '9' {
			u.Path = "/" + strings.Join(parts[:i], "/")
			if !strings.HasSuffix(u.Path, "/") {
				u.Path += "/"
			}
			u.RawQuery = ""
			return u.String()
		}
	}
	return endpoint
}
