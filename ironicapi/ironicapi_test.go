package ironicapi

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/ironicapi/ironictest"
)

const (
	nodeA = "c30b0d71-fb33-4e21-a129-f02b2b817285"
	nodeB = "24eaabfa-e651-4d63-9a4d-b90f914b1002"
)

func TestMicroversionAlwaysAtLeast132(t *testing.T) {
	for _, tc := range []struct {
		name, mv, want string
		more           map[string]string
	}{
		{name: "unset", mv: "", want: "1.32"},
		{name: "older", mv: "1.20", want: "1.32"},
		{name: "newer kept", mv: "1.50", want: "1.50"},
		{name: "pin in MoreHeaders dropped", mv: "", want: "1.32", more: map[string]string{"X-OpenStack-Ironic-API-Version": "1.31"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := ironictest.New(t, 100)
			f.AddNode("node-a", nodeA, "")
			// A hand-built client with no Type: gophercloud would send no
			// version header at all for it.
			sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: f.URL + "/", Microversion: tc.mv, MoreHeaders: tc.more}
			_, err := AllConnectors(context.Background(), ListConnectors(sc, nil), 0)
			require.NoError(t, err)
			require.Equal(t, []string{tc.want}, f.Versions)
			require.Equal(t, tc.mv, sc.Microversion, "caller's client unchanged")
		})
	}
}

func TestV1URL(t *testing.T) {
	for _, ep := range []string{"http://h:6385/", "http://h:6385/v1/", "http://h:6385"} {
		sc := &gophercloud.ServiceClient{Endpoint: ep}
		require.Equal(t, "http://h:6385/v1/volume/connectors", connectorKind().collectionURL(sc), ep)
	}
	sc := &gophercloud.ServiceClient{Endpoint: "http://h/", ResourceBase: "http://h/baremetal/v1/"}
	require.Equal(t, "http://h/baremetal/v1/nodes/n%2F1/volume/connectors", connectorKind().nodeURL(sc, "n/1"))
	// gophercloud's node requests join to the resource base: /v1/ there too.
	for _, ep := range []string{"http://h:6385/", "http://h:6385/v1/"} {
		vc := volumeClient(&gophercloud.ServiceClient{Endpoint: ep})
		require.Equal(t, "http://h:6385/v1/nodes/n1", vc.ServiceURL("nodes", "n1"), ep)
	}
}

// TestErrorKeepsCause: an *apierr.Error unwraps to its kind and to gophercloud's
// error, so gophercloud's own helpers work on it.
func TestErrorKeepsCause(t *testing.T) {
	f := ironictest.New(t, 10)
	sc := f.Client(t)
	ctx := context.Background()
	_, err := GetNode(ctx, sc, "nosuch").Extract()
	var e *apierr.Error
	require.ErrorAs(t, err, &e)
	require.ErrorIs(t, err, apierr.ErrNotFound)
	require.True(t, gophercloud.ResponseCodeIs(err, http.StatusNotFound))
	var ue gophercloud.ErrUnexpectedResponseCode
	require.True(t, errors.As(err, &ue))
	require.Equal(t, "Node nosuch could not be found.", e.Message)
	require.Contains(t, err.Error(), "baremetal node list", "hint kept")

	err = DeleteConnector(ctx, sc, "00000000-0000-4000-8000-000000000009").ExtractErr()
	require.ErrorIs(t, err, apierr.ErrNotFound)
	require.True(t, gophercloud.ResponseCodeIs(err, http.StatusNotFound))

	// A request brick refused to send has a kind but no HTTP cause.
	_, err = GetNode(ctx, sc, "a/b").Extract()
	require.ErrorIs(t, err, apierr.ErrInvalid)
	require.False(t, gophercloud.ResponseCodeIs(err, http.StatusNotFound))
}

// Bodies as the real Ironic 21.4.4 sent them.
const (
	body409Conn   = `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"A volume connector with type iqn and connector ID iqn.2010-10.org.openstack:a already exists.\", \"debuginfo\": null}"}`
	body409Boot   = `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"A volume target with boot index '0' for the same node already exists.\", \"debuginfo\": null}"}`
	body400PowOn  = `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"The requested action \\\"volume target update\\\" can not be performed on node \\\"c30b0d71-fb33-4e21-a129-f02b2b817285\\\" while it is in state \\\"power on\\\".\", \"debuginfo\": null}"}`
	body400None   = `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"The requested action \\\"volume connector deletion\\\" can not be performed on node \\\"c30b0d71-fb33-4e21-a129-f02b2b817285\\\" while it is in state \\\"None\\\".\", \"debuginfo\": null}"}`
	body400UUID   = `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Expected UUID for node_uuid: node-a\", \"debuginfo\": null}"}`
	body404Node   = `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node nosuch could not be found.\", \"debuginfo\": null}"}`
	body404Bare   = `{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`
	body406Old    = `{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.32 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.31].\"}"}`
	body406TooNew = `{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.99 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].\"}"}`
)

func TestErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		name      string
		code      int
		maxHdr    string
		body      string
		kind      error
		contains  []string
		resource  string
		op, node  string
		want      string
		wantState string
	}{
		{name: "duplicate connector", code: 409, body: body409Conn, kind: apierr.ErrConflict, resource: "volume connector",
			contains: []string{"already exists", "(HTTP 409)", "connector list --long"}},
		{name: "duplicate boot index", code: 409, body: body409Boot, kind: apierr.ErrConflict, resource: "volume target",
			contains: []string{"boot index '0'", "another --boot-index"}},
		{name: "powered on", code: 400, body: body400PowOn, kind: apierr.ErrInvalidState, resource: "volume target", wantState: "power on",
			contains: []string{"power it off", "openstack baremetal node power off " + nodeA}},
		{name: "power never set", code: 400, body: body400None, kind: apierr.ErrInvalidState, resource: "volume connector", wantState: "None",
			contains: []string{"unknown (never set)", "power it off"}},
		{name: "other 400", code: 400, body: body400UUID, kind: apierr.ErrInvalid, resource: "volume connector",
			contains: []string{"Expected UUID for node_uuid: node-a"}},
		{name: "node not found", code: 404, body: body404Node, kind: apierr.ErrNotFound, resource: "node",
			contains: []string{"Node nosuch could not be found.", "baremetal node list"}},
		{name: "bare 404 is an old Ironic", code: 404, body: body404Bare, kind: apierr.ErrUnsupported, resource: "volume connectors",
			contains: []string{"Ironic too old for volume resources", "bare 404", "1.32"}},
		{name: "bare 404 on a node URL is a wrong endpoint", code: 404, body: body404Bare, kind: apierr.ErrNotFound, resource: "node",
			contains: []string{"answered a bare 404", "check that the endpoint"}},
		{name: "406 from an old Ironic (header)", code: 406, maxHdr: "1.31", body: body406Old, kind: apierr.ErrUnsupported,
			contains: []string{"Ironic too old for volume resources", "newest API version is 1.31"}},
		{name: "406 from an old Ironic (body only)", code: 406, body: body406Old, kind: apierr.ErrUnsupported,
			contains: []string{"newest API version is 1.31"}},
		{name: "406 too new is not too old", code: 406, maxHdr: "1.82", body: body406TooNew, kind: nil,
			contains: []string{"supported version range is: [1.1, 1.82]"}},
		{name: "html from a proxy", code: 502, body: "<html><body>\nBad gateway\n</body></html>", kind: nil,
			want: "ironic create volume connector: an HTML page: Bad gateway (HTTP 502); Ironic (or a proxy in front of it) failed: try again later; if it persists, Ironic's log says why", resource: "volume connector"},
		{name: "html page with a title", code: 503, body: "<!DOCTYPE html>\n<html><head><title>503 Service Unavailable</title></head><body><h1>Service Unavailable</h1><p>The server is temporarily unable &amp; busy</p></body></html>", kind: nil,
			want: "ironic list volume connectors: an HTML page: 503 Service Unavailable (HTTP 503); Ironic (or a proxy in front of it) failed: try again later; if it persists, Ironic's log says why", op: "list", resource: "volume connectors"},
		{name: "keystonemiddleware 401", code: 401, body: `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`, kind: apierr.ErrUnauthorized,
			op: "list", resource: "volume connectors",
			want: "ironic list volume connectors: The request you have made requires authentication. (HTTP 401); Ironic refused the token (none, expired or revoked): with --os-token or OS_TOKEN get a new one ('openstack token issue'); " +
				"with --os-auth-type noauth this Ironic wants Keystone credentials instead (--os-cloud, or OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME)"},
		{name: "policy 403 on create", code: 403, body: `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Access was denied to the following resource: baremetal:volume:create\", \"debuginfo\": null}"}`, kind: apierr.ErrForbidden,
			resource: "volume connector", node: nodeA,
			want: "ironic create volume connector of node " + nodeA + ": Access was denied to the following resource: baremetal:volume:create (HTTP 403); Ironic's policy does not allow this to the user: it needs the admin role on the node's owner or lessee project, or a system-scoped member; use credentials with that role (--os-cloud, or --os-username and --os-project-name)"},
		{name: "policy 403 on a node read", code: 403, body: `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Access was denied to the following resource: baremetal:node:get\", \"debuginfo\": null}"}`, kind: apierr.ErrForbidden,
			op: "get", resource: "node",
			contains: []string{"baremetal:node:get (HTTP 403)", "a role on the node's owner project (reader to read)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.maxHdr != "" {
					w.Header().Set(maxVersionHeader, tc.maxHdr)
				}
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: srv.URL + "/"}
			_, err := sc.Get(context.Background(), srv.URL+"/v1/volume/connectors", nil, nil)
			require.Error(t, err)
			op := tc.op
			if op == "" {
				op = "create"
			}
			err = convert(call{op: op, resource: tc.resource, node: tc.node}, err)
			if tc.want != "" {
				require.Equal(t, tc.want, err.Error())
			}
			var e *apierr.Error
			require.ErrorAs(t, err, &e)
			if tc.kind != nil {
				require.ErrorIs(t, err, tc.kind)
			} else {
				require.Nil(t, e.Kind)
			}
			require.Equal(t, tc.code, e.Status)
			_, state, _ := NodePowerState(err)
			require.Equal(t, tc.wantState, state)
			for _, s := range tc.contains {
				require.Contains(t, err.Error(), s)
			}
			require.NotContains(t, err.Error(), `\"`, "double-encoded JSON must be decoded")
		})
	}
}

func TestDecodeErrorBody(t *testing.T) {
	for _, tc := range []struct {
		body, msg string
		bare      bool
	}{
		{body409Conn, "A volume connector with type iqn and connector ID iqn.2010-10.org.openstack:a already exists.", false},
		{body404Bare, "Not Found", true},
		{`{"error_message": {"faultstring": "single-encoded"}}`, "single-encoded", false},
		{`{"error_message": "plain text"}`, "plain text", false},
		{`not json`, "not json", true},
		{``, "", true},
		{`{"error_message": "{\"faultstring\": \"` + strings.Repeat("x", 400) + `\"}"}`, strings.Repeat("x", 300) + "...", false},
	} {
		msg, bare := DecodeErrorBody([]byte(tc.body))
		require.Equal(t, tc.msg, msg, tc.body)
		require.Equal(t, tc.bare, bare, tc.body)
	}
}

func TestPagerKeepsNodeFilter(t *testing.T) {
	f := ironictest.New(t, 2)
	f.AddNode("node-a", nodeA, PowerOff)
	f.AddNode("node-b", nodeB, PowerOff)
	var wantA []string
	for i := 0; i < 5; i++ {
		f.AddConnector(nodeB, "ip", "10.0.0."+string(rune('0'+i)))
		wantA = append(wantA, f.AddConnector(nodeA, "ip", "10.0.1."+string(rune('0'+i))).UUID)
	}
	sc := f.Client(t)
	ctx := context.Background()

	for _, tc := range []struct {
		name  string
		pager func() ([]VolumeConnector, error)
		path  string
	}{
		{"node= by name", func() ([]VolumeConnector, error) {
			return AllConnectors(ctx, ListConnectors(sc, ConnectorListOpts{Node: "node-a", Detail: true}), 0)
		}, "/v1/volume/connectors"},
		{"node-scoped path", func() ([]VolumeConnector, error) {
			return AllConnectors(ctx, ListNodeConnectors(sc, nodeA, ConnectorListOpts{Fields: []string{"uuid", "node_uuid"}}), 0)
		}, "/v1/nodes/" + nodeA + "/volume/connectors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.Requests = nil
			got, err := tc.pager()
			require.NoError(t, err)
			var ids []string
			for _, c := range got {
				require.Equal(t, nodeA, c.NodeUUID, "another node's record leaked in")
				ids = append(ids, c.UUID)
			}
			require.Equal(t, wantA, ids)
			require.Len(t, f.Requests, 3) // 2+2+1
			for _, r := range f.Requests {
				u, err := url.Parse(strings.TrimPrefix(r, "GET "))
				require.NoError(t, err)
				require.Equal(t, tc.path, u.Path, "next page must keep the path (not the advertised host/path)")
			}
			require.Contains(t, f.Requests[1], "marker=")
			if strings.Contains(tc.name, "node=") {
				require.Contains(t, f.Requests[2], "node=node-a")
				require.Contains(t, f.Requests[2], "detail=True")
			} else {
				require.Contains(t, f.Requests[2], "fields=uuid%2Cnode_uuid")
			}
		})
	}

	t.Run("max stops early", func(t *testing.T) {
		f.Requests = nil
		got, err := AllConnectors(ctx, ListConnectors(sc, ConnectorListOpts{Node: nodeA, Limit: 2}), 3)
		require.NoError(t, err)
		require.Len(t, got, 3)
		require.Len(t, f.Requests, 2)
	})
}

func TestNextURL(t *testing.T) {
	cur, _ := url.Parse("http://ironic/v1/nodes/" + nodeA + "/volume/targets?fields=uuid&limit=2")
	got, err := nextURL(*cur, "http://other:1/v1/volume/targets?limit=2&marker=m1")
	require.NoError(t, err)
	require.Equal(t, "http://ironic/v1/nodes/"+nodeA+"/volume/targets?fields=uuid&limit=2&marker=m1", got)
	_, err = nextURL(*cur, "http://other/v1/volume/targets?limit=2")
	require.ErrorIs(t, err, errNoMarker)
	cur2, _ := url.Parse(got)
	_, err = nextURL(*cur2, "http://other/v1/volume/targets?marker=m1")
	require.ErrorContains(t, err, "repeats marker")
}

func TestNormalizeConnectorID(t *testing.T) {
	for _, tc := range []struct {
		typ, id, want, err string
	}{
		{"iqn", "iqn.2004-10.com.Example:Node-1", "iqn.2004-10.com.Example:Node-1", ""},
		{"iqn", "eui.0123456789ABCDEF", "eui.0123456789ABCDEF", ""},
		{"iqn", "iqn.2004-10.com.example:a;rm", "", "not an iSCSI name"},
		{"iqn", "not-an-iqn", "", "not an iSCSI name"},
		{"ip", "192.0.2.1", "192.0.2.1", ""},
		{"ip", "2001:DB8::1", "2001:db8::1", ""},
		{"ip", "fe80::1%eth0", "", "not an IPv4"},
		{"ip", "192.0.2.300", "", "not an IPv4"},
		{"mac", "52:54:00:AB:CD:EF", "52:54:00:ab:cd:ef", ""},
		{"mac", "52-54-00-ab-cd-ef", "52:54:00:ab:cd:ef", ""},
		{"mac", "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01", "", "not a MAC"},
		{"wwpn", "0x21:00:00:24:FF:5A:7B:3C", "21000024ff5a7b3c", ""},
		{"wwnn", "2000", "", "not a WWN"},
		{"port", "3B6D0E34-0B0C-4E3F-9A6A-111111111111", "3b6d0e34-0b0c-4e3f-9a6a-111111111111", ""},
		{"portgroup", "pg-1", "", "not a portgroup UUID"},
		{"nqn", "nqn.2014-08.org.nvmexpress:uuid:1", "", "not one of iqn, ip, mac"},
		{"iqn", "", "", "empty"},
		{"iqn", "-iqn.2004-10.com.example", "", "starts with '-'"},
		{"ip", "10.0.0.1\x00", "", "control characters"},
	} {
		got, err := NormalizeConnectorID(tc.typ, tc.id)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "%s %q", tc.typ, tc.id)
			continue
		}
		require.NoError(t, err, "%s %q", tc.typ, tc.id)
		require.Equal(t, tc.want, got)
	}
}

func TestCreateValidation(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer srv.Close()
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: srv.URL + "/"}
	ctx := context.Background()
	vol := "7b6c1a6e-3f1e-4a53-b8f1-0a0a0a0a0a0a"
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"node name", CreateConnector(ctx, sc, ConnectorCreateOpts{NodeUUID: "node-a", Type: "iqn", ConnectorID: "iqn.2004-10.com.example:a"}).Err, "node_uuid"},
		{"bad type", CreateConnector(ctx, sc, ConnectorCreateOpts{NodeUUID: nodeA, Type: "fc", ConnectorID: "x"}).Err, "connector type"},
		{"bad extra key", CreateConnector(ctx, sc, ConnectorCreateOpts{NodeUUID: nodeA, Type: "ip", ConnectorID: "10.0.0.1", Extra: map[string]any{"": 1}}).Err, "extra key"},
		{"negative boot index", CreateTarget(ctx, sc, TargetCreateOpts{NodeUUID: nodeA, VolumeType: "iscsi", BootIndex: -1, VolumeID: vol}).Err, "boot_index -1"},
		{"unknown volume type", CreateTarget(ctx, sc, TargetCreateOpts{NodeUUID: nodeA, VolumeType: "bogus", VolumeID: vol}).Err, "volume_type"},
		{"volume id not uuid", CreateTarget(ctx, sc, TargetCreateOpts{NodeUUID: nodeA, VolumeType: "iscsi", VolumeID: "vol-1"}).Err, "volume_id"},
		{"target update boot index", UpdateTarget(ctx, sc, vol, TargetUpdateOpts{Replace("/boot_index", -2)}).Err, "boot_index"},
		{"target update bad path", UpdateTarget(ctx, sc, vol, TargetUpdateOpts{Replace("/uuid", vol)}).Err, "cannot be changed"},
		{"connector update pair", UpdateConnector(ctx, sc, vol, ConnectorUpdateOpts{Replace("/type", "mac"), Replace("/connector_id", "10.0.0.1")}).Err, "not a MAC"},
		{"connector update type", UpdateConnector(ctx, sc, vol, ConnectorUpdateOpts{Replace("/type", "nqn")}).Err, "connector type"},
		{"get not uuid", GetConnector(ctx, sc, "../nodes", nil).Err, "not a UUID"},
		{"delete not uuid", DeleteTarget(ctx, sc, "x").Err, "not a UUID"},
		{"bad fields", GetTarget(ctx, sc, vol, &GetOpts{Fields: []string{"type"}}).Err, "field"},
		{"node ident with slash", GetNode(ctx, sc, "a/b").Err, "not a node name or UUID"},
		{"patch key Ironic cannot patch", UpdateTarget(ctx, sc, vol, TargetUpdateOpts{Add(PropertyPath("a/b"), 1)}).Err, "keys may hold only"},
		{"property key Ironic cannot patch", CreateTarget(ctx, sc, TargetCreateOpts{NodeUUID: nodeA, VolumeType: "iscsi", VolumeID: vol, Properties: map[string]any{"a.b": 1}}).Err, "properties key"},
		{"empty patch", UpdateTarget(ctx, sc, vol, TargetUpdateOpts{}).Err, "nothing to change"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.err, apierr.ErrInvalid)
			require.ErrorContains(t, tc.err, tc.want)
		})
	}
	_, err := AllTargets(ctx, ListTargets(sc, TargetListOpts{Detail: true, Fields: []string{"uuid"}}), 0)
	require.ErrorIs(t, err, apierr.ErrInvalid)
	_, err = AllConnectors(ctx, ListConnectors(sc, ConnectorListOpts{SortDir: "up"}), 0)
	require.ErrorIs(t, err, apierr.ErrInvalid)
	require.Zero(t, hits, "nothing invalid may reach the server")
}

func TestResolveNode(t *testing.T) {
	ctx := context.Background()
	f := ironictest.New(t, 10)
	f.AddNode("node-a", nodeA, "")
	sc := f.Client(t)
	id, err := ResolveNode(ctx, sc, "node-a")
	require.NoError(t, err)
	require.Equal(t, nodeA, id)
	_, err = ResolveNode(ctx, sc, "nosuch")
	require.ErrorIs(t, err, apierr.ErrNotFound)
}

// TestNotJSONAnswer: a 200 that is not Ironic's JSON (a web server on
// the port) says so with the fix, not the JSON decoder's complaint.
func TestNotJSONAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("hello")) }))
	defer srv.Close()
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: srv.URL + "/v1/"}
	var out map[string]any
	_, err := sc.Get(context.Background(), srv.URL+"/v1/volume/connectors", &out, nil)
	require.Error(t, err)
	err = convert(call{op: "list", resource: "volume connectors"}, err)
	require.ErrorIs(t, err, apierr.ErrUnreachable)
	require.Equal(t, "ironic list volume connectors: the answer is not Ironic's JSON; "+
		"check --ironic-endpoint, or the catalog's baremetal endpoint for --os-region-name and --os-interface", err.Error())
}

func TestUnreachableErrors(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hung.Close()
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	for _, tc := range []struct {
		name, base string
		timeout    time.Duration
		want       string
	}{
		{"closed port", closedURL, 0, "ironic list volume connectors: cannot reach " + closedURL + "/v1/volume/connectors: connection refused; " +
			"check --ironic-endpoint, or the catalog's baremetal endpoint for --os-region-name and --os-interface, and that Ironic runs there"},
		{"hung server", hung.URL, 300 * time.Millisecond, "ironic list volume connectors: cannot reach " + hung.URL + "/v1/volume/connectors: no answer (timed out); " +
			"check --ironic-endpoint, or the catalog's baremetal endpoint for --os-region-name and --os-interface, and that Ironic runs there"},
		{"unknown CA", tlsSrv.URL, 0, "ironic list volume connectors: cannot reach " + tlsSrv.URL + "/v1/volume/connectors: certificate signed by unknown authority; " +
			"give the CA bundle with --os-cacert, or verify: false in clouds.yaml / --insecure to skip the check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: tc.base + "/v1/"}
			sc.HTTPClient = http.Client{Timeout: tc.timeout}
			_, err := sc.Get(context.Background(), tc.base+"/v1/volume/connectors?secret=x", nil, nil)
			require.Error(t, err)
			err = convert(call{op: "list", resource: "volume connectors"}, err)
			require.ErrorIs(t, err, apierr.ErrUnreachable)
			require.Equal(t, tc.want, err.Error())
		})
	}
}

func TestNodeHasPort(t *testing.T) {
	var query string
	ports := `[]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query = r.URL.Path + "?" + r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ports": ` + ports + `}`))
	}))
	defer srv.Close()
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{HTTPClient: *srv.Client()}, Endpoint: srv.URL + "/"}
	ctx := context.Background()
	for _, tc := range []struct {
		ports string
		want  bool
	}{{`[]`, false}, {`[{"uuid": "` + nodeA + `", "address": "52:54:00:12:34:56"}]`, true}} {
		ports = tc.ports
		got, err := NodeHasPort(ctx, sc, nodeA)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, tc.ports)
		require.Equal(t, "/v1/ports?limit=1&node_uuid="+nodeA, query)
	}
	_, err := NodeHasPort(ctx, sc, "node-a")
	require.ErrorContains(t, err, "is not a UUID")
}
