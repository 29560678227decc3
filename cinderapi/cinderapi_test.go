package cinderapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/cinderapi"
	"github.com/brick-storage/brick/cinderapi/cindertest"
)

const vol1 = "11111111-1111-4111-8111-111111111111"

var conn = cinderapi.HostConnector{
	"platform": "x86_64", "os_type": "linux", "ip": "10.0.2.15", "host": "node1",
	"multipath": false, "initiator": "iqn.1993-08.org.debian:01:abc",
	"wwnns": []any{"2000000000000001"}, "do_local_attach": false,
}

func newClient(t *testing.T, fake *cindertest.Server, forced string) *cinderapi.Client {
	t.Helper()
	c, err := cinderapi.NewClient(context.Background(), fake.ServiceClient(), forced)
	require.NoError(t, err)
	c.PollGap = 5 * time.Millisecond // the fakes answer at once
	return c
}

func TestNegotiation(t *testing.T) {
	for _, tc := range []struct {
		max, forced, want, flow string
	}{
		{"3.70", "", "3.54", cinderapi.FlowV3},
		{"3.50", "", "3.44", cinderapi.FlowV3},
		{"3.40", "", "3.40", cinderapi.FlowLegacy},
		{"3.70", "3.0", "3.0", cinderapi.FlowLegacy},
		{"3.70", "3.27", "3.27", cinderapi.FlowLegacy},
		{"3.70", "3.44", "3.44", cinderapi.FlowV3},
		{"3.70", "3.70", "3.70", cinderapi.FlowV3},
	} {
		fake := cindertest.New(t)
		fake.MaxVersion = tc.max
		c := newClient(t, fake, tc.forced)
		require.Equal(t, tc.want, c.Version.String(), tc)
		require.Equal(t, tc.flow, c.Flow().Name(), tc)
	}
	fake := cindertest.New(t)
	for _, bad := range []string{"3.99", "x", "2.0", "3.x", "latest"} {
		_, err := cinderapi.NewClient(context.Background(), fake.ServiceClient(), bad)
		require.ErrorIs(t, err, apierr.ErrUnsupported, bad)
	}
	_, err := cinderapi.NewClient(context.Background(), fake.ServiceClient(), "3.99")
	require.EqualError(t, err, "cinder microversion: this Cinder supports 3.0 to 3.70, not 3.99")
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	pc := &gophercloud.ProviderClient{}
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: url + "/v3/p/", Type: "block-storage"}
	_, err := cinderapi.NewClient(context.Background(), sc, "")
	require.ErrorIs(t, err, apierr.ErrUnreachable)
	require.Contains(t, err.Error(), "cinder version discovery: cannot reach "+url+"/")
	require.Contains(t, err.Error(), "connection refused")
	require.NotContains(t, err.Error(), "\n")
}

func TestTimeout(t *testing.T) {
	fake := cindertest.New(t)
	fake.AddVolume(vol1, "v")
	c := newClient(t, fake, "")
	fake.Fail("get", cindertest.Fault{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Volume(ctx, vol1)
	require.ErrorIs(t, err, apierr.ErrUnreachable)
	require.Contains(t, err.Error(), "cinder get volume "+vol1)
}

func TestV3Flow(t *testing.T) {
	for _, mv := range []string{"3.54", "3.44"} {
		fake := cindertest.New(t)
		fake.AddVolume(vol1, "data")
		c := newClient(t, fake, mv)
		f := c.Flow()
		ctx := context.Background()
		id, err := f.Reserve(ctx, vol1, "rw")
		require.NoError(t, err)
		st, _ := fake.Status(vol1)
		require.Equal(t, "reserved", st)
		info, err := f.Export(ctx, vol1, id, conn)
		require.NoError(t, err)
		require.Equal(t, "iscsi", info.DriverVolumeType)
		lun, _, err := info.Int("target_lun")
		require.NoError(t, err)
		require.EqualValues(t, 1, lun)
		got, err := f.Complete(ctx, vol1, id, cinderapi.CompleteOpts{HostName: "node1"})
		require.NoError(t, err)
		require.Equal(t, id, got)
		st, _ = fake.Status(vol1)
		require.Equal(t, "in-use", st)

		again, err := f.ConnectionInfo(ctx, vol1, id, conn)
		require.NoError(t, err)
		require.Equal(t, info.Data["target_iqn"], again.Data["target_iqn"])

		rel := cinderapi.ReleaseOpts{AttachmentID: id, Connector: conn, HostName: "node1"}
		require.NoError(t, f.Release(ctx, vol1, rel))
		require.NoError(t, f.Release(ctx, vol1, rel), "detach twice is fine")
		st, n := fake.Status(vol1)
		require.Equal(t, "available", st)
		require.Zero(t, n)
		require.Zero(t, fake.Exports())

		reqs := fake.Requests()
		var create map[string]any
		for _, r := range reqs {
			if r.Op == "attachment-create" {
				create = r.Body["attachment"].(map[string]any)
			}
			if r.Op != "versions" {
				require.Equal(t, mv, r.Microversion)
			}
		}
		require.NotContains(t, create, "instance_uuid")
		require.NotContains(t, create, "connector", "reserve first, export second")
		if mv == "3.54" {
			require.Equal(t, "rw", create["mode"])
		} else {
			require.NotContains(t, create, "mode")
		}
	}
}

func TestLegacyFlow(t *testing.T) {
	fake := cindertest.New(t)
	fake.AddVolume(vol1, "data")
	c := newClient(t, fake, "3.0")
	f := c.Flow()
	ctx := context.Background()
	id, err := f.Reserve(ctx, vol1, "rw")
	require.NoError(t, err)
	require.Empty(t, id)
	info, err := f.Export(ctx, vol1, id, conn)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:3260", info.Data["target_portal"])
	require.Equal(t, []string{"chap-SECRET-pw"}, info.Secrets())
	id, err = f.Complete(ctx, vol1, id, cinderapi.CompleteOpts{HostName: "node1", Mountpoint: "/mnt/x"})
	require.NoError(t, err)
	require.NotEmpty(t, id)
	roll, err := f.BeginDetach(ctx, vol1)
	require.NoError(t, err)
	st, _ := fake.Status(vol1)
	require.Equal(t, "detaching", st)
	require.NoError(t, roll(ctx))
	st, _ = fake.Status(vol1)
	require.Equal(t, "in-use", st)
	_, err = f.BeginDetach(ctx, vol1)
	require.NoError(t, err)
	rel := cinderapi.ReleaseOpts{AttachmentID: id, Connector: conn, HostName: "node1"}
	require.NoError(t, f.Release(ctx, vol1, rel))
	require.NoError(t, f.Release(ctx, vol1, rel), "detach twice is fine")
	st, _ = fake.Status(vol1)
	require.Equal(t, "available", st)
	require.Zero(t, fake.Exports())

	for _, r := range fake.Requests() {
		switch r.Op {
		case "os-initialize_connection":
			c := r.Body["os-initialize_connection"].(map[string]any)["connector"].(map[string]any)
			require.IsType(t, []any{}, c["wwnns"], "wwnns stays a list")
			require.Equal(t, false, c["multipath"])
		case "os-attach":
			a := r.Body["os-attach"].(map[string]any)
			require.Equal(t, map[string]any{"host_name": "node1", "mountpoint": "/mnt/x", "mode": "rw"}, a)
		}
	}
}

func TestLegacyUndo(t *testing.T) {
	fake := cindertest.New(t)
	fake.AddVolume(vol1, "data")
	c := newClient(t, fake, "3.0")
	f := c.Flow()
	ctx := context.Background()
	_, err := f.Reserve(ctx, vol1, "")
	require.NoError(t, err)
	_, err = f.Export(ctx, vol1, "", conn)
	require.NoError(t, err)
	id, err := f.Complete(ctx, vol1, "", cinderapi.CompleteOpts{HostName: "node1"})
	require.NoError(t, err)
	require.NoError(t, f.Release(ctx, vol1, cinderapi.ReleaseOpts{AttachmentID: id, Connector: conn, HostName: "node1"}))
	st, n := fake.Status(vol1)
	require.Equal(t, "available", st)
	require.Zero(t, n)
	require.Zero(t, fake.Exports())

	// Reserve + export, then undo: the attachment ID is not known.
	_, err = f.Reserve(ctx, vol1, "")
	require.NoError(t, err)
	_, err = f.Export(ctx, vol1, "", conn)
	require.NoError(t, err)
	require.NoError(t, f.Release(ctx, vol1, cinderapi.ReleaseOpts{Connector: conn, HostName: "node1"}))
	st, _ = fake.Status(vol1)
	require.Equal(t, "available", st)
	require.Zero(t, fake.Exports())

	// Reserve then undo before export: no terminate_connection.
	_, err = f.Reserve(ctx, vol1, "")
	require.NoError(t, err)
	before := len(fake.Requests())
	require.NoError(t, f.Release(ctx, vol1, cinderapi.ReleaseOpts{HostName: "node1"}))
	st, _ = fake.Status(vol1)
	require.Equal(t, "available", st)
	for _, r := range fake.Requests()[before:] {
		require.NotEqual(t, "os-terminate_connection", r.Op)
	}
}

func TestErrors(t *testing.T) {
	fake := cindertest.New(t)
	fake.AddVolume(vol1, "data")
	c := newClient(t, fake, "3.0")
	ctx := context.Background()

	_, err := c.Volume(ctx, "22222222-2222-4222-8222-222222222222")
	require.ErrorIs(t, err, apierr.ErrNotFound)
	require.EqualError(t, err, "cinder get volume 22222222-2222-4222-8222-222222222222: Volume 22222222-2222-4222-8222-222222222222 could not be found (HTTP 404)")

	fake.SetStatus(vol1, "in-use")
	_, err = c.Flow().Reserve(ctx, vol1, "")
	require.ErrorIs(t, err, apierr.ErrInvalidState)
	require.EqualError(t, err, "cinder reserve volume "+vol1+": Invalid volume: Volume status must be available to reserve, but the status is in-use (HTTP 400)")

	fake.Fail("os-initialize_connection", cindertest.Fault{Status: 500, Body: `{"computeFault": {"code": 500, "message": "boom\nTraceback (most recent call last):\n secret stuff"}}`})
	_, err = c.Flow().Export(ctx, vol1, "", conn)
	require.ErrorIs(t, err, apierr.ErrUnreachable)
	require.EqualError(t, err, "cinder initialize_connection volume "+vol1+": boom (HTTP 500); "+
		"Cinder (or a proxy in front of it) failed: try again later; if it persists, Cinder's log says why")

	// A proxy's error page and an answer that is not JSON: one line each.
	fake.Fail("get", cindertest.Fault{Status: 502, Body: "<html><head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>", Times: 1})
	_, err = c.Volume(ctx, vol1)
	require.ErrorIs(t, err, apierr.ErrUnreachable)
	require.EqualError(t, err, "cinder get volume "+vol1+": an HTML page: 502 Bad Gateway (HTTP 502); "+
		"Cinder (or a proxy in front of it) failed: try again later; if it persists, Cinder's log says why")
	fake.Fail("get", cindertest.Fault{Status: 200, Body: "hello", Times: 1})
	_, err = c.Volume(ctx, vol1)
	require.ErrorIs(t, err, apierr.ErrUnexpected)
	require.EqualError(t, err, "cinder get volume "+vol1+": the answer is not Cinder's JSON; "+
		"check --cinder-endpoint, or the catalog's block-storage endpoint for --os-region-name and --os-interface")

	fake.Fail("get", cindertest.Fault{Status: 404, Body: "<html><body>404 Not Found</body></html>"})
	_, err = c.Volume(ctx, vol1)
	require.ErrorIs(t, err, apierr.ErrNotFound)
	require.EqualError(t, err, "cinder get volume "+vol1+": not found (HTTP 404)")

	fake.Fail("get", cindertest.Fault{Status: 403, Body: `{"forbidden": {"message": "Policy doesn't allow volume:get to be performed."}}`, Times: 1})
	_, err = c.Volume(ctx, vol1)
	require.ErrorIs(t, err, apierr.ErrForbidden)

	var ce *apierr.Error
	require.True(t, errors.As(err, &ce))
	require.Equal(t, 403, ce.Status)
}

// Refusals a cloud user meets: one line naming the step, the volume, the
// cause and the flags that fix it.
func TestAuthErrors(t *testing.T) {
	for _, tc := range []struct {
		name, op string
		fault    cindertest.Fault
		call     func(context.Context, *cinderapi.Client) error
		want     string
	}{
		{"member force-detaches", "os-force_detach",
			cindertest.Fault{Status: 403, Body: `{"forbidden": {"code": 403, "message": "Policy doesn't allow volume_extension:volume_admin_actions:force_detach to be performed."}}`},
			func(ctx context.Context, c *cinderapi.Client) error {
				return c.ForceDetach(ctx, vol1, "", cinderapi.HostConnector{})
			},
			"cinder force_detach volume " + vol1 + ": Policy doesn't allow volume_extension:volume_admin_actions:force_detach to be performed (HTTP 403); " +
				"Cinder's policy does not allow force_detach to this user: it needs the admin role; use credentials with it (--os-cloud, or --os-username and --os-project-name)"},
		{"reader reserves", "attachment-create",
			cindertest.Fault{Status: 403, Body: `{"forbidden": {"code": 403, "message": "Policy doesn't allow volume:attachment_create to be performed."}}`},
			func(ctx context.Context, c *cinderapi.Client) error {
				_, err := c.Flow().Reserve(ctx, vol1, "")
				return err
			},
			"cinder attachment create volume " + vol1 + ": Policy doesn't allow volume:attachment_create to be performed (HTTP 403); " +
				"Cinder's policy does not allow attachment create to this user: it needs the member role on the volume's project (a reader may only read); use credentials with it (--os-cloud, or --os-username and --os-project-name)"},
		{"expired token mid-run", "get",
			cindertest.Fault{Status: 401, Body: `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`},
			func(ctx context.Context, c *cinderapi.Client) error { _, err := c.Volume(ctx, vol1); return err },
			"cinder get volume " + vol1 + ": The request you have made requires authentication (HTTP 401); Cinder refused the token (expired or revoked): with --os-token or OS_TOKEN get a new one ('openstack token issue'); " +
				"otherwise check the credentials (--os-cloud or the OS_* variables)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := cindertest.New(t)
			fake.AddVolume(vol1, "data")
			c := newClient(t, fake, "")
			fake.Fail(tc.op, tc.fault)
			err := tc.call(context.Background(), c)
			require.ErrorIs(t, err, map[int]error{401: apierr.ErrUnauthorized, 403: apierr.ErrForbidden}[tc.fault.Status])
			require.Equal(t, tc.want, err.Error())
			require.True(t, gophercloud.ResponseCodeIs(err, tc.fault.Status))
		})
	}
}

// The typed errors keep gophercloud's error as their cause, without the
// response body (a traceback).
func TestErrorsKeepCause(t *testing.T) {
	fake := cindertest.New(t)
	fake.AddVolume(vol1, "data")
	c := newClient(t, fake, "")
	ctx := context.Background()
	_, err := c.Volume(ctx, "22222222-2222-4222-8222-222222222222")
	require.ErrorIs(t, err, apierr.ErrNotFound)
	require.True(t, gophercloud.ResponseCodeIs(err, 404))
	require.False(t, gophercloud.ResponseCodeIs(err, 500))

	fake.Fail("attachment-create", cindertest.Fault{Status: 500, Body: `{"computeFault": {"code": 500, "message": "boom\nTraceback (most recent call last):\n secret stuff"}}`})
	_, err = c.Flow().Reserve(ctx, vol1, "rw")
	require.ErrorIs(t, err, apierr.ErrUnreachable)
	require.True(t, gophercloud.ResponseCodeIs(err, 500))
	var code gophercloud.ErrUnexpectedResponseCode
	require.ErrorAs(t, err, &code)
	require.Empty(t, code.Body)
	require.NotContains(t, code.Error(), "secret stuff")
	var ce *apierr.Error
	require.ErrorAs(t, err, &ce)
	require.NotContains(t, ce.Err.Error(), "Traceback")
}

// A server that hands out next links forever does not keep brick busy.
func TestEndlessPages(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/" {
			_, _ = w.Write([]byte(`{"versions":[{"id":"v3.0","status":"CURRENT","version":"3.70","min_version":"3.0"}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"volumes":[{"id":"x","name":"other"}],"volumes_links":[{"rel":"next","href":"` + srv.URL + `/v3/p/volumes/detail?marker=x"}]}`))
	}))
	defer srv.Close()
	sc := &gophercloud.ServiceClient{ProviderClient: &gophercloud.ProviderClient{}, Endpoint: srv.URL + "/v3/p/", Type: "block-storage"}
	c, err := cinderapi.NewClient(context.Background(), sc, "")
	require.NoError(t, err)
	_, err = c.FindVolume(context.Background(), "data")
	require.ErrorContains(t, err, "next link repeats marker")
}

func TestFindVolume(t *testing.T) {
	fake := cindertest.New(t)
	fake.AddVolume(vol1, "data")
	fake.AddVolume("22222222-2222-4222-8222-222222222222", "dup")
	fake.AddVolume("33333333-3333-4333-8333-333333333333", "dup")
	fake.AddVolume("44444444-4444-4444-8444-444444444444", "55555555-5555-4555-8555-555555555555")
	c := newClient(t, fake, "")
	ctx := context.Background()
	v, err := c.FindVolume(ctx, vol1)
	require.NoError(t, err)
	require.Equal(t, "data", v.Name)
	v, err = c.FindVolume(ctx, "data")
	require.NoError(t, err)
	require.Equal(t, vol1, v.ID)
	v, err = c.FindVolume(ctx, "55555555-5555-4555-8555-555555555555")
	require.NoError(t, err, "a name that looks like a UUID")
	require.Equal(t, "44444444-4444-4444-8444-444444444444", v.ID)

	_, err = c.FindVolume(ctx, "dup")
	require.ErrorIs(t, err, apierr.ErrAmbiguous)
	require.EqualError(t, err, "cinder find volume dup: 2 volumes have this name, use an ID: 22222222-2222-4222-8222-222222222222, 33333333-3333-4333-8333-333333333333")
	_, err = c.FindVolume(ctx, "nope")
	require.ErrorIs(t, err, apierr.ErrNotFound)
	require.EqualError(t, err, "cinder find volume nope: no volume with this ID or name")

	// With Keystone credentials a missing volume may be another project's.
	c.SC.IdentityEndpoint = "http://keystone.example/v3/"
	_, err = c.FindVolume(ctx, "nope")
	require.ErrorIs(t, err, apierr.ErrNotFound)
	require.EqualError(t, err, "cinder find volume nope: no volume with this ID or name; these credentials see the volumes of project "+cindertest.Project+
		" only: for another project's volume use credentials for that project (--os-project-name, --os-cloud) or an admin's")
	c.SC.IdentityEndpoint = ""
	_, err = c.FindVolume(ctx, "a\nb")
	require.ErrorIs(t, err, apierr.ErrInvalid)
	_, err = c.FindVolume(ctx, "")
	require.Error(t, err)
}

func TestShortMessage(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"badRequest": {"code": 400, "message": "Invalid volume: x."}}`, "Invalid volume: x"},
		{`{"itemNotFound": {"message": "a\nb"}}`, "a"},
		{`{"computeFault": {"message": "Traceback (most recent call last): boom"}}`, ""},
		{`<html>`, ""},
		{`{"x": "y"}`, ""},
		{`{"e": {"message": "` + strings.Repeat("é", 300) + `"}}`, strings.Repeat("é", 120) + "..."},
	} {
		require.Equal(t, tc.want, cinderapi.ShortMessage([]byte(tc.body)), tc.body)
	}
}

func FuzzShortMessage(f *testing.F) {
	f.Add([]byte(`{"badRequest": {"code": 400, "message": "Invalid volume: x."}}`))
	f.Add([]byte(`{"a": {"message": "x\u0000\nTraceback (most recent call last)"}}`))
	f.Add([]byte(`<html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m := cinderapi.ShortMessage(body)
		if strings.ContainsAny(m, "\r\n\x00") || strings.Contains(m, "Traceback (most recent call last)") || len(m) > 260 {
			t.Fatalf("bad message %q", m)
		}
	})
}

func FuzzParseMicroversion(f *testing.F) {
	for _, s := range []string{"3.0", "3.44", "3.x", "", "latest", "3.99999", " 3.1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mv, err := cinderapi.ParseMicroversion(s)
		if err == nil {
			again, err := cinderapi.ParseMicroversion(mv.String())
			if err != nil || again != mv || mv.Major != 3 {
				t.Fatalf("%q -> %v (%v)", s, mv, err)
			}
		}
	})
}
