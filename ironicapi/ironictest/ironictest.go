// Package ironictest is a fake Ironic for the tests of ironicapi and its
// users: nodes (get by name or UUID, property patches) and volume
// connectors (list, create, delete) with the JSON shapes, error bodies and
// "next" links measured against the real Ironic 21.4 (the test bed in test/ironic):
// next links drop node= and the /nodes/<uuid> prefix, deletes need the
// node powered off, a bare 404 answers the volume URLs below 1.32.
package ironictest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
)

// Node is a fake node as Ironic shows it.
type Node struct {
	UUID       string         `json:"uuid"`
	Name       string         `json:"name"`
	PowerState string         `json:"power_state"`
	Properties map[string]any `json:"properties"`
}

// Connector is a fake volume connector as Ironic shows it.
type Connector struct {
	UUID        string         `json:"uuid"`
	NodeUUID    string         `json:"node_uuid"`
	Type        string         `json:"type"`
	ConnectorID string         `json:"connector_id"`
	Extra       map[string]any `json:"extra"`
}

// Server is the fake. Tests read and change its fields between calls.
type Server struct {
	URL      string
	MaxLimit int              // Ironic's [api] max_limit
	Nodes    map[string]*Node // by UUID
	Conns    []Connector      // ordered by creation
	Requests []string         // "METHOD path?query"
	Versions []string         // the version header of each request
	mu       sync.Mutex
	seq      int
}

const bare404 = `{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`

// New starts a fake Ironic that pages lists by maxLimit.
func New(t testing.TB, maxLimit int) *Server {
	f := &Server{MaxLimit: maxLimit, Nodes: map[string]*Node{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Client is a noauth client of the fake, as osauth builds one.
func (f *Server) Client(t testing.TB) *gophercloud.ServiceClient {
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// AddNode adds a node; power "" is a power state never set.
func (f *Server) AddNode(name, uuid, power string) {
	f.Nodes[uuid] = &Node{UUID: uuid, Name: name, PowerState: power, Properties: map[string]any{}}
}

// AddConnector adds a connector to a node and returns it.
func (f *Server) AddConnector(node, typ, id string) Connector {
	f.seq++
	c := Connector{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", f.seq), NodeUUID: node, Type: typ, ConnectorID: id, Extra: map[string]any{}}
	f.Conns = append(f.Conns, c)
	return c
}

// Fault writes an error the way Ironic does: a faultstring double-encoded
// in error_message.
func Fault(w http.ResponseWriter, code int, msg string) {
	inner, _ := json.Marshal(map[string]any{"faultcode": "Client", "faultstring": msg, "debuginfo": nil})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error_message": string(inner)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *Server) lookup(ident string) *Node {
	if n, ok := f.Nodes[ident]; ok {
		return n
	}
	for _, n := range f.Nodes {
		if n.Name == ident {
			return n
		}
	}
	return nil
}

// volumeAPI reports whether version v (major.minor) has the volume API.
func volumeAPI(v string) bool {
	major, minor, err := utils.ParseMicroversion(v)
	return err == nil && (major > 1 || major == 1 && minor >= 32)
}

func (f *Server) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Requests = append(f.Requests, r.Method+" "+r.URL.RequestURI())
	v := r.Header.Get("X-OpenStack-Ironic-API-Version")
	f.Versions = append(f.Versions, v)
	w.Header().Set("X-OpenStack-Ironic-API-Maximum-Version", "1.82")
	if !volumeAPI(v) && strings.Contains(r.URL.Path, "/volume/") {
		w.WriteHeader(404)
		_, _ = w.Write([]byte(bare404))
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 3 && parts[1] == "nodes" && (r.Method == "GET" || r.Method == "PATCH"):
		f.node(w, r, parts[2])
	case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/volume/connectors"):
		f.listConnectors(w, r, parts)
	case r.Method == "POST" && r.URL.Path == "/v1/volume/connectors":
		f.createConnector(w, r)
	case r.Method == "DELETE" && len(parts) == 4 && parts[2] == "connectors":
		f.deleteConnector(w, parts[3])
	default:
		w.WriteHeader(404)
		_, _ = w.Write([]byte(bare404))
	}
}

// node answers GET and PATCH (of /properties/KEY) on a node.
func (f *Server) node(w http.ResponseWriter, r *http.Request, ident string) {
	n := f.lookup(ident)
	if n == nil {
		Fault(w, 404, "Node "+ident+" could not be found.")
		return
	}
	if r.Method == "PATCH" {
		var ops []map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ops)
		for _, op := range ops {
			path, _ := op["path"].(string)
			n.Properties[strings.TrimPrefix(path, "/properties/")] = op["value"]
		}
	}
	writeJSON(w, 200, n)
}

// listNode is the UUID of the node a connector list is limited to ("" for
// none); ok is false when the node does not exist (the 404 is written).
func (f *Server) listNode(w http.ResponseWriter, r *http.Request, parts []string) (string, bool) {
	node := r.URL.Query().Get("node")
	if len(parts) == 5 { // /v1/nodes/<uuid>/volume/connectors takes a UUID only
		if _, ok := f.Nodes[parts[2]]; !ok {
			Fault(w, 404, "Node "+parts[2]+" could not be found.")
			return "", false
		}
		node = parts[2]
	}
	if node == "" {
		return "", true
	}
	n := f.lookup(node)
	if n == nil {
		Fault(w, 404, "Node "+node+" could not be found.")
		return "", false
	}
	return n.UUID, true
}

func (f *Server) listConnectors(w http.ResponseWriter, r *http.Request, parts []string) {
	node, ok := f.listNode(w, r, parts)
	if !ok {
		return
	}
	q := r.URL.Query()
	limit := f.MaxLimit
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 && l < limit {
		limit = l
	}
	var page []Connector
	list := f.sorted(q)
	for _, c := range list[after(list, q.Get("marker")):] {
		if node != "" && c.NodeUUID != node {
			continue
		}
		if len(page) == limit {
			break
		}
		page = append(page, c)
	}
	body := map[string]any{"connectors": page}
	if len(page) == limit {
		// Like Ironic: rebuilt from the collection URL, node= dropped.
		nq := url.Values{}
		nq.Set("sort_key", "id")
		nq.Set("sort_dir", "asc")
		nq.Set("limit", strconv.Itoa(limit))
		nq.Set("marker", page[len(page)-1].UUID)
		body["next"] = "http://internal.example:6385/v1/volume/connectors?" + nq.Encode()
	}
	writeJSON(w, 200, body)
}

// sorted is the connectors in the order sort_key and sort_dir ask for.
func (f *Server) sorted(q url.Values) []Connector {
	list := append([]Connector(nil), f.Conns...)
	if q.Get("sort_key") == "connector_id" {
		sort.SliceStable(list, func(i, j int) bool { return list[i].ConnectorID < list[j].ConnectorID })
	}
	if q.Get("sort_dir") == "desc" {
		for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
			list[i], list[j] = list[j], list[i]
		}
	}
	return list
}

// after is the index that follows the marker's connector (0 without one).
func after(list []Connector, marker string) int {
	for i, c := range list {
		if marker != "" && c.UUID == marker {
			return i + 1
		}
	}
	return 0
}

func (f *Server) createConnector(w http.ResponseWriter, r *http.Request) {
	var c Connector
	_ = json.NewDecoder(r.Body).Decode(&c)
	for _, o := range f.Conns {
		if o.Type == c.Type && o.ConnectorID == c.ConnectorID {
			Fault(w, 409, fmt.Sprintf("A volume connector with type %s and connector ID %s already exists.", c.Type, c.ConnectorID))
			return
		}
	}
	writeJSON(w, 201, f.AddConnector(c.NodeUUID, c.Type, c.ConnectorID))
}

func (f *Server) deleteConnector(w http.ResponseWriter, uuid string) {
	for i, c := range f.Conns {
		if c.UUID != uuid {
			continue
		}
		if n := f.Nodes[c.NodeUUID]; n.PowerState != "power off" {
			state := n.PowerState
			if state == "" {
				state = "None"
			}
			Fault(w, 400, fmt.Sprintf(`The requested action "volume connector deletion" can not be performed on node "%s" while it is in state "%s".`, n.UUID, state))
			return
		}
		f.Conns = append(f.Conns[:i], f.Conns[i+1:]...)
		w.WriteHeader(204)
		return
	}
	Fault(w, 404, "Volume connector "+uuid+" could not be found.")
}
