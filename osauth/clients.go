package osauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	baremetalhttpbasic "github.com/gophercloud/gophercloud/v2/openstack/baremetal/httpbasic"
	baremetalnoauth "github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
)

// ErrNoKeystone marks a service that can only be found in Keystone's
// catalog (Barbican) asked for without Keystone (noauth, http_basic).
var ErrNoKeystone = errors.New("no Keystone catalog")

// Clients is the one factory of cloud clients: Cinder, Ironic and
// Barbican from one set of options. Nothing is read or sent until a
// client is asked for (so building a command's help costs nothing); the
// options are resolved once, Keystone is asked once and every service
// shares that session, whose token gophercloud renews when it expires.
// Failures are not remembered, so a long-running server retries them on
// its next call. Safe for concurrent use.
//
//	clients := osauth.NewClients(osauth.Options{Cloud: "prod", Redactor: r})
//	cinder, err := clients.BlockStorage(ctx)
type Clients struct {
	given Options

	mu       sync.Mutex
	resolved *Options
	hc       *http.Client
	keystone *gophercloud.ProviderClient
}

// NewClients returns a factory for the options; it does nothing yet.
func NewClients(o Options) *Clients { return &Clients{given: o} }

// Options are the resolved options: the clouds.yaml entry laid under the
// given values, defaults applied. Configuration mistakes wrap ErrConfig.
func (c *Clients) Options() (Options, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, _, err := c.prepare()
	return o, err
}

// prepare resolves the options and builds the HTTP client once; c.mu held.
func (c *Clients) prepare() (Options, *http.Client, error) {
	if c.resolved != nil {
		return *c.resolved, c.hc, nil
	}
	o, err := Resolve(c.given)
	if err != nil {
		return o, nil, err
	}
	hc, err := httpClient(o)
	if err != nil {
		return o, nil, err
	}
	c.resolved, c.hc = &o, hc
	return o, hc, nil
}

// provider is the Keystone session, authenticated on first use; c.mu held.
func (c *Clients) provider(ctx context.Context, o Options, hc *http.Client) (*gophercloud.ProviderClient, error) {
	if c.keystone != nil {
		return c.keystone, nil
	}
	pc, err := keystoneClient(ctx, o, hc)
	if err != nil {
		return nil, err
	}
	c.keystone = pc
	return pc, nil
}

// service is one cloud service as the endpoint resolver sees it.
type service struct {
	name, catalogType, flag string
	// override is the endpoint given instead of the catalog's; "" for none.
	override func(Options) string
	// fromCatalog is gophercloud's constructor for the catalog's endpoint.
	fromCatalog func(*gophercloud.ProviderClient, gophercloud.EndpointOpts) (*gophercloud.ServiceClient, error)
}

var (
	cinderService = service{name: "Cinder", catalogType: "block-storage", flag: "--cinder-endpoint",
		override: func(o Options) string { return o.CinderEndpoint }, fromCatalog: openstack.NewBlockStorageV3}
	ironicService = service{name: "Ironic", catalogType: "baremetal", flag: "--ironic-endpoint",
		override: func(o Options) string { return o.IronicEndpoint }, fromCatalog: openstack.NewBareMetalV1}
	barbicanService = service{name: "Barbican", catalogType: "key-manager", flag: "the catalog",
		override: func(Options) string { return "" }, fromCatalog: openstack.NewKeyManagerV1}
)

// fromKeystone is the one endpoint resolver: the override when given
// (with the token's project substituted), else the catalog's endpoint of
// the service's type for the interface and region asked for.
func (c *Clients) fromKeystone(ctx context.Context, s service) (*gophercloud.ServiceClient, error) {
	o, hc, err := c.prepare()
	if err != nil {
		return nil, err
	}
	pc, err := c.provider(ctx, o, hc)
	if err != nil {
		return nil, err
	}
	if raw := s.override(o); raw != "" {
		endpoint, err := checkURL(substituteProject(raw, projectOf(pc, o)))
		if err != nil {
			return nil, err
		}
		return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: endpoint, Type: s.catalogType}, nil
	}
	eo := endpointOpts(o)
	sc, err := s.fromCatalog(pc, eo)
	if err != nil {
		return nil, endpointFailure(pc, s.name, s.catalogType, s.flag, eo, err)
	}
	return sc, nil
}

// BlockStorage returns a Cinder v3 client. With noauth the endpoint is
// CinderEndpoint + "/" + project id and the token "<user>:<project>";
// otherwise Keystone's session with the catalog's endpoint unless
// CinderEndpoint overrides it. The client carries no microversion:
// cinderapi negotiates it.
func (c *Clients) BlockStorage(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return c.client(ctx, cinderService, func(o Options, hc *http.Client) (*gophercloud.ServiceClient, error) {
		if o.AuthType == AuthHTTPBasic {
			return nil, fmt.Errorf("%w: auth type http_basic works for Ironic only", ErrConfig)
		}
		return noauthCinder(o, hc)
	})
}

// Baremetal returns an Ironic client: noauth or http_basic against
// IronicEndpoint, else Keystone's session with the catalog's endpoint (or
// IronicEndpoint). The caller sets the microversion (>= 1.32 for the
// volume API).
func (c *Clients) Baremetal(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return c.client(ctx, ironicService, standaloneIronic)
}

// KeyManager returns a Barbican v1 client from Keystone's catalog. Without
// Keystone the error wraps ErrNoKeystone; a catalog without Barbican gives
// one wrapping apierr.ErrNoEndpoint.
func (c *Clients) KeyManager(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return c.client(ctx, barbicanService, func(o Options, _ *http.Client) (*gophercloud.ServiceClient, error) {
		return nil, fmt.Errorf("%w: auth type %s has no service catalog to find Barbican in", ErrNoKeystone, o.AuthType)
	})
}

// client builds s's client: standalone without Keystone (noauth,
// http_basic), else from Keystone's session.
func (c *Clients) client(ctx context.Context, s service, standalone func(Options, *http.Client) (*gophercloud.ServiceClient, error)) (*gophercloud.ServiceClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, hc, err := c.prepare()
	if err != nil {
		return nil, err
	}
	if o.AuthType == AuthNoAuth || o.AuthType == AuthHTTPBasic {
		return standalone(o, hc)
	}
	return c.fromKeystone(ctx, s)
}

// BlockStorageClient is NewClients(opts).BlockStorage(ctx), for callers
// that need Cinder only.
func BlockStorageClient(ctx context.Context, opts Options) (*gophercloud.ServiceClient, error) {
	return NewClients(opts).BlockStorage(ctx)
}

// BaremetalClient is NewClients(opts).Baremetal(ctx), for callers that
// need Ironic only.
func BaremetalClient(ctx context.Context, opts Options) (*gophercloud.ServiceClient, error) {
	return NewClients(opts).Baremetal(ctx)
}

// noauthCinder is Cinder without Keystone: the project in the URL and the
// token "<user>:<project>", as Cinder's noauth middleware reads them.
func noauthCinder(o Options, hc *http.Client) (*gophercloud.ServiceClient, error) {
	if o.CinderEndpoint == "" {
		return nil, noEndpoint(o, "Cinder", "--cinder-endpoint (BRICK_CINDER_ENDPOINT), e.g. http://host:8776/v3")
	}
	project := first(o.ProjectID, DefaultNoAuthProject)
	user := first(o.UserID, o.Username, DefaultNoAuthUser)
	if strings.ContainsAny(user+project, ":/?#") {
		return nil, fmt.Errorf("%w: noauth user %q and project %q must not contain ':', '/', '?' or '#'", ErrConfig, user, project)
	}
	endpoint, err := noauthCinderURL(o.CinderEndpoint, project)
	if err != nil {
		return nil, err
	}
	pc := &gophercloud.ProviderClient{HTTPClient: *hc}
	pc.UserAgent.Prepend(o.UserAgent)
	pc.SetToken(user + ":" + project)
	return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: endpoint, Type: "block-storage"}, nil
}

// standaloneIronic is Ironic without Keystone: noauth or http_basic.
func standaloneIronic(o Options, hc *http.Client) (*gophercloud.ServiceClient, error) {
	if o.IronicEndpoint == "" {
		if o.AuthType == AuthHTTPBasic {
			return nil, fmt.Errorf("%w: http_basic Ironic needs --ironic-endpoint (BRICK_IRONIC_ENDPOINT)", ErrConfig)
		}
		return nil, noEndpoint(o, "Ironic", "--ironic-endpoint (BRICK_IRONIC_ENDPOINT), e.g. http://host:6385")
	}
	if _, err := checkURL(o.IronicEndpoint); err != nil {
		return nil, err
	}
	var sc *gophercloud.ServiceClient
	var err error
	if o.AuthType == AuthNoAuth {
		sc, err = baremetalnoauth.NewBareMetalNoAuth(baremetalnoauth.EndpointOpts{IronicEndpoint: o.IronicEndpoint})
	} else {
		if o.Username == "" || o.Password.IsZero() {
			// gophercloud's own error names its Go fields (IronicUser).
			return nil, fmt.Errorf("%w: http_basic Ironic needs --os-username and --os-password (OS_USERNAME, OS_PASSWORD)", ErrConfig)
		}
		sc, err = baremetalhttpbasic.NewBareMetalHTTPBasic(baremetalhttpbasic.EndpointOpts{
			IronicEndpoint: o.IronicEndpoint, IronicUser: o.Username, IronicUserPassword: o.Password.Reveal(),
		})
		if err == nil {
			// The basic-auth header is a secret too.
			o.Redactor.Add(sc.MoreHeaders["Authorization"], strings.TrimPrefix(sc.MoreHeaders["Authorization"], "Basic "))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	sc.ProviderClient.HTTPClient = *hc
	sc.ProviderClient.UserAgent.Prepend(o.UserAgent)
	return sc, nil
}

// endpointOpts is where in the catalog the options look: their region
// and interface (public unless internal or admin, with or without "URL").
func endpointOpts(o Options) gophercloud.EndpointOpts {
	eo := gophercloud.EndpointOpts{Region: o.RegionName, Availability: gophercloud.AvailabilityPublic}
	switch strings.TrimSuffix(strings.ToLower(o.Interface), "url") {
	case "internal":
		eo.Availability = gophercloud.AvailabilityInternal
	case "admin":
		eo.Availability = gophercloud.AvailabilityAdmin
	}
	return eo
}
