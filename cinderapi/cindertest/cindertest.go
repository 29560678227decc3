// Package cindertest is an in-memory fake Cinder (noauth, one project) for
// unit tests: volumes with statuses, legacy actions and v3 attachments
// behaving like Cinder Zed in the transitions brick relies on, request
// recording, and fault injection by operation name.
package cindertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// Project is the project id in the fake's URLs.
const Project = "00000000000000000000000000000000"

// MaxVersion is the microversion range the fake advertises by default.
const MaxVersion = "3.70"

// Volume is a fake volume.
type Volume struct {
	ID, Name, Status string
	Attachments      []*Attachment
}

// Attachment is a fake attachment (legacy or v3).
type Attachment struct {
	ID, Status, Host, Mountpoint, Mode string
	Connector                          map[string]any
	Exported                           bool
}

// Request is one recorded request.
type Request struct {
	Op           string // operation name, see Server.Fail
	Method, Path string
	Query        string // the raw query
	Microversion string
	Body         map[string]any
}

// Fault is an injected failure.
type Fault struct {
	Status int
	Body   string
	// Times is how many calls fail (0: every call).
	Times int
	// Hang answers nothing until the client gives up (timeout tests).
	Hang bool
}

// Server is the fake.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	volumes  map[string]*Volume
	faults   map[string]*Fault
	requests []Request
	// legacyExports holds volumes exported by initialize_connection (one
	// target per volume, as with tgt: initializing twice re-uses it).
	legacyExports map[string]bool
	nextID        int
	// MinVersion and MaxVersion are advertised at "/".
	MinVersion, MaxVersion string
	// PageSize, when set, pages lists as Cinder's osapi_max_limit does;
	// LinkBase, when set, is the origin their next links name.
	PageSize int
	LinkBase string
	// SubstringNames matches name= as a substring, as some releases do.
	SubstringNames bool
	// ConnectionInfo builds the (flat) connection info for a volume.
	ConnectionInfo func(volumeID string, connector map[string]any) map[string]any
}

// New starts a fake Cinder; it stops with the test.
func New(t testing.TB) *Server {
	s := &Server{volumes: map[string]*Volume{}, faults: map[string]*Fault{}, legacyExports: map[string]bool{}, MinVersion: "3.0", MaxVersion: MaxVersion}
	s.ConnectionInfo = DefaultConnectionInfo
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Endpoint is the noauth endpoint to hand to osauth (…/v3).
func (s *Server) Endpoint() string { return s.URL + "/v3" }

// ServiceClient returns a gophercloud client for the fake's project.
func (s *Server) ServiceClient() *gophercloud.ServiceClient {
	// Its own transport: every httptest.Server.Close closes the idle
	// connections of http.DefaultTransport, which fails requests in flight
	// ("CloseIdleConnections called") of tests running in parallel.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	pc := &gophercloud.ProviderClient{HTTPClient: http.Client{Timeout: 10 * time.Second, Transport: tr}}
	pc.SetToken("brick:" + Project)
	return &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: s.URL + "/v3/" + Project + "/", Type: "block-storage"}
}

// DefaultConnectionInfo is an iSCSI export with CHAP, like the test bed's.
func DefaultConnectionInfo(volumeID string, _ map[string]any) map[string]any {
	return map[string]any{
		"driver_volume_type": "iscsi",
		"target_discovered":  false,
		"target_portal":      "127.0.0.1:3260",
		"target_iqn":         "iqn.2010-10.org.openstack:volume-" + volumeID,
		"target_lun":         1,
		"volume_id":          volumeID,
		"auth_method":        "CHAP",
		"auth_username":      "chapuser",
		"auth_password":      "chap-SECRET-pw",
		"encrypted":          false,
		"access_mode":        "rw",
	}
}

// AddVolume creates an available volume.
func (s *Server) AddVolume(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.volumes[id] = &Volume{ID: id, Name: name, Status: "available"}
}

// AddAttachment gives a volume a v3 attachment for host in the given
// status ("attached", "reserved"), without a connection.
func (s *Server) AddAttachment(volumeID, attachmentID, host, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumes[volumeID]
	v.Attachments = append(v.Attachments, &Attachment{ID: attachmentID, Status: status, Host: host, Mode: "rw"})
}

// SetStatus forces a volume's status.
func (s *Server) SetStatus(id, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.volumes[id].Status = status
}

// Status returns the volume's status and its number of attachments.
func (s *Server) Status(id string) (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.volumes[id]
	if v == nil {
		return "", 0
	}
	return v.Status, len(v.Attachments)
}

// Exports is the number of live exports; 0 means nothing leaked.
func (s *Server) Exports() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.legacyExports {
		if e {
			n++
		}
	}
	for _, v := range s.volumes {
		for _, a := range v.Attachments {
			if a.Exported {
				n++
			}
		}
	}
	return n
}

// Fail makes the named operation fail: get, list, versions,
// attachment-create, attachment-update, attachment-complete,
// attachment-delete, attachment-show, attachment-list, or a volume action
// name (os-reserve, os-initialize_connection, os-attach, ...).
func (s *Server) Fail(op string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = &f
}

// Requests returns the recorded requests.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Ops returns the recorded operation names.
func (s *Server) Ops() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, r.Op)
	}
	return out
}

var (
	volRE     = regexp.MustCompile(`^/v3/` + Project + `/volumes/([^/]+)$`)
	actRE     = regexp.MustCompile(`^/v3/` + Project + `/volumes/([^/]+)/action$`)
	attRE     = regexp.MustCompile(`^/v3/` + Project + `/attachments/([^/]+)$`)
	attActRE  = regexp.MustCompile(`^/v3/` + Project + `/attachments/([^/]+)/action$`)
	volsPath  = "/v3/" + Project + "/volumes"
	attsPath  = "/v3/" + Project + "/attachments"
	attsDPath = "/v3/" + Project + "/attachments/detail"
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Body != nil {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	mv := strings.TrimPrefix(r.Header.Get("OpenStack-API-Version"), "volume ")
	op := opName(r, body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Op: op, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Microversion: mv, Body: body})
	f := s.faults[op]
	if f != nil && f.Times > 0 {
		f.Times--
		if f.Times == 0 {
			delete(s.faults, op)
		}
	}
	s.mu.Unlock()
	if f != nil {
		if f.Hang {
			<-r.Context().Done()
			return
		}
		if f.Status != 0 {
			w.WriteHeader(f.Status)
			_, _ = w.Write([]byte(f.Body))
			return
		}
	}
	if op == "versions" {
		writeJSON(w, 300, map[string]any{"versions": []any{map[string]any{
			"id": "v3.0", "status": "CURRENT", "version": s.MaxVersion, "min_version": s.MinVersion}}})
		return
	}
	if r.Header.Get("X-Auth-Token") != "brick:"+Project && !strings.HasSuffix(r.Header.Get("X-Auth-Token"), ":"+Project) {
		writeErr(w, 401, "unauthorized", "bad token")
		return
	}
	if mv != "" {
		if !mvOK(mv, s.MaxVersion) {
			writeErr(w, 406, "computeFault", fmt.Sprintf("Version %s is not supported by the API. Minimum is %s and maximum is %s.", mv, s.MinVersion, s.MaxVersion))
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handle(w, r, op, mv, body)
}

func opName(r *http.Request, body map[string]any) string {
	p := r.URL.Path
	switch {
	case p == "/" || p == "":
		return "versions"
	case (p == volsPath || p == volsPath+"/detail") && r.Method == http.MethodGet:
		return "list"
	case volRE.MatchString(p) && r.Method == http.MethodGet:
		return "get"
	case actRE.MatchString(p):
		for k := range body {
			return k
		}
		return "action"
	case p == attsPath && r.Method == http.MethodPost:
		return "attachment-create"
	case p == attsDPath || p == attsPath:
		return "attachment-list"
	case attActRE.MatchString(p):
		return "attachment-complete"
	case attRE.MatchString(p):
		switch r.Method {
		case http.MethodPut:
			return "attachment-update"
		case http.MethodDelete:
			return "attachment-delete"
		}
		return "attachment-show"
	}
	return "unknown"
}

func mvOK(mv, max string) bool {
	var a, b, c, d int
	if _, err := fmt.Sscanf(mv, "%d.%d", &a, &b); err != nil {
		return false
	}
	if _, err := fmt.Sscanf(max, "%d.%d", &c, &d); err != nil {
		return false
	}
	return a == 3 && (b <= d)
}

func mvAtLeast(mv string, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(mv, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > 3 || (a == 3 && b >= minor)
}

func (s *Server) newID() string {
	s.nextID++
	return fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", s.nextID)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request, op, mv string, body map[string]any) {
	p := r.URL.Path
	switch op {
	case "list":
		name := r.URL.Query().Get("name")
		var out []map[string]any
		for _, v := range s.volumes {
			if name == "" || v.Name == name || (s.SubstringNames && strings.Contains(v.Name, name)) {
				out = append(out, s.volumeView(v))
			}
		}
		s.writeList(w, r, "volumes", out)
		return
	case "get":
		v := s.volumes[volRE.FindStringSubmatch(p)[1]]
		if v == nil {
			writeErr(w, 404, "itemNotFound", fmt.Sprintf("Volume %s could not be found.", volRE.FindStringSubmatch(p)[1]))
			return
		}
		writeJSON(w, 200, map[string]any{"volume": s.volumeView(v)})
		return
	}
	if m := actRE.FindStringSubmatch(p); m != nil {
		v := s.volumes[m[1]]
		if v == nil {
			writeErr(w, 404, "itemNotFound", fmt.Sprintf("Volume %s could not be found.", m[1]))
			return
		}
		s.action(w, v, op, body)
		return
	}
	if strings.HasPrefix(op, "attachment-") {
		if !mvAtLeast(mv, 27) {
			writeErr(w, 404, "itemNotFound", "The resource could not be found.")
			return
		}
		s.attachment(w, r, op, mv, body)
		return
	}
	writeErr(w, 404, "itemNotFound", "The resource could not be found.")
}

func (s *Server) volumeView(v *Volume) map[string]any {
	var atts []any
	for _, a := range v.Attachments {
		if a.Status != "attached" {
			continue
		}
		atts = append(atts, map[string]any{"id": v.ID, "attachment_id": a.ID, "volume_id": v.ID, "server_id": nil,
			"host_name": a.Host, "device": a.Mountpoint, "attached_at": "2026-01-01T00:00:00.000000"})
	}
	if atts == nil {
		atts = []any{}
	}
	return map[string]any{"id": v.ID, "name": v.Name, "status": v.Status, "size": 1, "multiattach": false,
		"attachments": atts, "migration_status": nil, "encrypted": false, "volume_type": "__DEFAULT__"}
}

// action runs a legacy volume action and answers 202, or writes the error.
func (s *Server) action(w http.ResponseWriter, v *Volume, op string, body map[string]any) {
	args, _ := body[op].(map[string]any)
	var status int
	var msg string
	switch op {
	case "os-initialize_connection":
		s.initializeConnection(w, v, args)
		return
	case "os-reserve", "os-unreserve", "os-begin_detaching", "os-roll_detaching":
		status, msg = s.stateAction(v, op)
	case "os-terminate_connection":
		delete(s.legacyExports, v.ID)
	case "os-attach":
		status, msg = s.osAttach(v, args)
	case "os-detach", "os-force_detach":
		status, msg = s.osDetach(v, op, args)
	case "os-reset_status":
		v.Status = str(args["status"])
		if str(args["attach_status"]) == "detached" {
			v.Attachments = nil
		}
	default:
		status, msg = 400, "There is no such action: "+op
	}
	if status != 0 {
		writeErr(w, status, errKey(status), msg)
		return
	}
	w.WriteHeader(202)
}

func errKey(status int) string {
	switch status {
	case 404:
		return "itemNotFound"
	case 409:
		return "conflictingRequest"
	case 500:
		return "computeFault"
	}
	return "badRequest"
}

// invalidState is Cinder's 400 for a volume in the wrong state, traceback
// included (brick must not print it).
func invalidState(v *Volume, want string) (int, string) {
	return 400, fmt.Sprintf("Invalid volume: Volume status must be %s, but the status is %s.\nTraceback (most recent call last):\n  File \"x.py\"", want, v.Status)
}

// stateAction moves a volume between available, attaching, in-use and
// detaching.
func (s *Server) stateAction(v *Volume, op string) (int, string) {
	switch op {
	case "os-reserve":
		if v.Status != "available" {
			return invalidState(v, "available to reserve")
		}
		v.Status = "attaching"
		v.Attachments = append(v.Attachments, &Attachment{ID: s.newID(), Status: "reserved"})
	case "os-unreserve":
		if v.Status == "attaching" {
			v.Status = "available"
			v.Attachments = keep(v.Attachments, func(a *Attachment) bool { return a.Status == "attached" })
		}
	case "os-begin_detaching":
		if v.Status != "in-use" {
			return invalidState(v, "in-use")
		}
		v.Status = "detaching"
	case "os-roll_detaching":
		if v.Status == "detaching" {
			v.Status = "in-use"
		}
	}
	return 0, ""
}

func (s *Server) initializeConnection(w http.ResponseWriter, v *Volume, args map[string]any) {
	conn, _ := args["connector"].(map[string]any)
	if conn["initiator"] == nil {
		writeErr(w, 400, "badRequest", "Invalid input received: connector has no initiator")
		return
	}
	s.legacyExports[v.ID] = true
	writeJSON(w, 200, map[string]any{"connection_info": nest(s.ConnectionInfo(v.ID, conn))})
}

func (s *Server) osAttach(v *Volume, args map[string]any) (int, string) {
	if _, ok := args["mountpoint"]; !ok {
		return 400, "Invalid input for field/attribute os-attach. 'mountpoint' is a required property"
	}
	if v.Status != "attaching" && v.Status != "available" {
		return invalidState(v, "attaching")
	}
	var a *Attachment
	for _, x := range v.Attachments {
		if x.Status == "reserved" {
			a = x
		}
	}
	if a == nil {
		a = &Attachment{ID: s.newID()}
		v.Attachments = append(v.Attachments, a)
	}
	a.Status, a.Host, a.Mountpoint, a.Mode = "attached", str(args["host_name"]), str(args["mountpoint"]), str(args["mode"])
	v.Status = "in-use"
	return 0, ""
}

func (s *Server) osDetach(v *Volume, op string, args map[string]any) (int, string) {
	id := str(args["attachment_id"])
	found := false
	v.Attachments = keep(v.Attachments, func(a *Attachment) bool {
		if a.ID == id {
			found = true
			return false
		}
		return true
	})
	if !found && op == "os-detach" {
		return 409, "ConflictNovaUsingAttachment: Detach volume from instance  using the Compute API"
	}
	if len(v.Attachments) == 0 {
		v.Status = "available"
	}
	return 0, ""
}

func nest(flat map[string]any) map[string]any {
	data := map[string]any{}
	for k, v := range flat {
		if k != "driver_volume_type" {
			data[k] = v
		}
	}
	return map[string]any{"driver_volume_type": flat["driver_volume_type"], "data": data}
}

func keep(list []*Attachment, f func(*Attachment) bool) []*Attachment {
	var out []*Attachment
	for _, a := range list {
		if f(a) {
			out = append(out, a)
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, key, msg string) {
	writeJSON(w, code, map[string]any{key: map[string]any{"code": code, "message": msg}})
}
