package ironicapi

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
	"github.com/stretchr/testify/require"
)

// fakeIronic imitates the parts of Ironic 21.4's volume connector API
// brick uses, with the JSON shapes, error bodies and "next" links measured
// against the real server (see TESTBED.md): next links drop node= and the
// /nodes/<uuid> prefix, exactly as the real one does.
type fakeIronic struct {
	t        testing.TB
	mu       sync.Mutex
	srv      *httptest.Server
	maxLimit int
	nodes    map[string]*fakeNode // by UUID
	conns    []Connector          // ordered by id (creation)
	requests []string             // "METHOD path?query"
	versions []string
	seq      int
}

type fakeNode struct {
	Node
}

func newFakeIronic(t testing.TB, maxLimit int) *fakeIronic {
	f := &fakeIronic{t: t, maxLimit: maxLimit, nodes: map[string]*fakeNode{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeIronic) client(t testing.TB) *gophercloud.ServiceClient {
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: f.srv.URL})
	require.NoError(t, err)
	return sc
}

func (f *fakeIronic) addNode(name, uuid, power string) {
	f.nodes[uuid] = &fakeNode{Node{UUID: uuid, Name: name, PowerState: power, Properties: map[string]any{}}}
}

func (f *fakeIronic) addConnector(node, typ, id string) Connector {
	f.seq++
	c := Connector{UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", f.seq), NodeUUID: node, Type: typ, ConnectorID: id, Extra: map[string]any{}}
	f.conns = append(f.conns, c)
	return c
}

func fault(w http.ResponseWriter, code int, msg string) {
	inner, _ := json.Marshal(map[string]any{"faultcode": "Client", "faultstring": msg, "debuginfo": nil})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error_message": string(inner)})
}

func (f *fakeIronic) lookup(ident string) *fakeNode {
	if n, ok := f.nodes[ident]; ok {
		return n
	}
	for _, n := range f.nodes {
		if n.Name == ident {
			return n
		}
	}
	return nil
}

func (f *fakeIronic) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	v := r.Header.Get(versionHeader)
	f.versions = append(f.versions, v)
	w.Header().Set(maxVersionHeader, "1.82")
	if compareVersions(v, MinMicroversion) < 0 && strings.Contains(r.URL.Path, "/volume/") {
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`))
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	switch {
	case r.Method == "GET" && len(parts) == 3 && parts[1] == "nodes":
		n := f.lookup(parts[2])
		if n == nil {
			fault(w, 404, "Node "+parts[2]+" could not be found.")
			return
		}
		writeJSON(w, 200, n.Node)
	case r.Method == "PATCH" && len(parts) == 3 && parts[1] == "nodes":
		n := f.lookup(parts[2])
		var ops []map[string]any
		_ = json.NewDecoder(r.Body).Decode(&ops)
		for _, op := range ops {
			n.Properties[strings.TrimPrefix(op["path"].(string), "/properties/")] = op["value"]
		}
		writeJSON(w, 200, n.Node)
	case r.Method == "GET" && (strings.HasSuffix(r.URL.Path, "/volume/connectors")):
		node := q.Get("node")
		if len(parts) == 5 { // /v1/nodes/<uuid>/volume/connectors
			if _, ok := f.nodes[parts[2]]; !ok {
				fault(w, 404, "Node "+parts[2]+" could not be found.")
				return
			}
			node = parts[2]
		}
		if node != "" {
			n := f.lookup(node)
			if n == nil {
				fault(w, 404, "Node "+node+" could not be found.")
				return
			}
			node = n.UUID
		}
		limit := f.maxLimit
		if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 && l < limit {
			limit = l
		}
		list := append([]Connector(nil), f.conns...)
		if q.Get("sort_key") == "connector_id" {
			sort.SliceStable(list, func(i, j int) bool { return list[i].ConnectorID < list[j].ConnectorID })
		}
		if q.Get("sort_dir") == "desc" {
			for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
				list[i], list[j] = list[j], list[i]
			}
		}
		start := 0
		if m := q.Get("marker"); m != "" {
			for i, c := range list {
				if c.UUID == m {
					start = i + 1
				}
			}
		}
		var page []Connector
		for _, c := range list[start:] {
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
	case r.Method == "POST" && r.URL.Path == "/v1/volume/connectors":
		var c Connector
		_ = json.NewDecoder(r.Body).Decode(&c)
		for _, o := range f.conns {
			if o.Type == c.Type && o.ConnectorID == c.ConnectorID {
				fault(w, 409, fmt.Sprintf("A volume connector with type %s and connector ID %s already exists.", c.Type, c.ConnectorID))
				return
			}
		}
		writeJSON(w, 201, f.addConnector(c.NodeUUID, c.Type, c.ConnectorID))
	case r.Method == "DELETE" && len(parts) == 4 && parts[2] == "connectors":
		for i, c := range f.conns {
			if c.UUID == parts[3] {
				if n := f.nodes[c.NodeUUID]; n.PowerState != PowerOff {
					state := n.PowerState
					if state == "" {
						state = "None"
					}
					fault(w, 400, fmt.Sprintf(`The requested action "volume connector deletion" can not be performed on node "%s" while it is in state "%s".`, n.UUID, state))
					return
				}
				f.conns = append(f.conns[:i], f.conns[i+1:]...)
				w.WriteHeader(204)
				return
			}
		}
		fault(w, 404, "Volume connector "+parts[3]+" could not be found.")
	default:
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`))
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
