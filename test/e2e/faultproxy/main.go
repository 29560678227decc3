// Command faultproxy is a test tool: an HTTP reverse proxy in front of a
// Cinder API that answers chosen volume/attachment actions with an error,
// so e2e tests can make "the final Cinder call" of a local-attach fail
// against the real Cinder (everything else is forwarded untouched). With
// -die-after it instead forwards the named call and then stops listening,
// as if Cinder went away right after it: every later call is refused.
//
//	faultproxy -listen 127.0.0.1:18776 -target http://10.0.2.2:8776 -fail os-complete,os-attach
//	faultproxy -listen 127.0.0.1:18776 -target http://10.0.2.2:8776 -fail "" -die-after attachment-update,os-initialize_connection
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18776", "address to listen on")
	target := flag.String("target", "http://10.0.2.2:8776", "Cinder API root to forward to")
	fail := flag.String("fail", "os-complete,os-attach", "comma list of action names (the body's top-level key) to fail with HTTP 500")
	dieAfter := flag.String("die-after", "", "comma list of action names (or attachment-update for PUT /attachments/ID) after whose answer the proxy exits")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil {
		log.Fatal(err)
	}
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, a := range strings.Split(s, ",") {
			if a = strings.TrimSpace(a); a != "" {
				m[a] = true
			}
		}
		return m
	}
	failing, dying := set(*fail), set(*dieAfter)
	die := make(chan struct{})
	var dieOnce sync.Once
	proxy := httputil.NewSingleHostReverseProxy(u)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := ""
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/action"):
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m map[string]json.RawMessage
			if json.Unmarshal(body, &m) == nil {
				for k := range m {
					name = k
				}
			}
		case r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/attachments/"):
			name = "attachment-update"
		}
		if failing[name] {
			log.Printf("faultproxy: failing %s %s (%s)", r.Method, r.URL.Path, name)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"computeFault": {"code": 500, "message": "injected by faultproxy: ` + name + ` failed"}}`))
			return
		}
		proxy.ServeHTTP(w, r)
		if dying[name] {
			log.Printf("faultproxy: %s %s (%s) answered; going away", r.Method, r.URL.Path, name)
			dieOnce.Do(func() { close(die) })
		}
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	log.Printf("faultproxy: %s -> %s, failing %v, dying after %v", *listen, *target, *fail, *dieAfter)
	stopped := make(chan struct{})
	go func() {
		<-die
		// Shutdown lets the answer in flight finish, then closes the
		// listener and idle keep-alive connections: later calls are refused.
		_ = srv.Shutdown(context.Background())
		close(stopped)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	<-stopped
	log.Printf("faultproxy: stopped")
}
