// Command faultproxy is a test tool: an HTTP reverse proxy in front of a
// Cinder API that answers chosen volume/attachment actions with an error,
// so e2e tests can make "the final Cinder call" of a local-attach fail
// against the real Cinder (everything else is forwarded untouched).
//
//	faultproxy -listen 127.0.0.1:18776 -target http://10.0.2.2:8776 -fail os-complete,os-attach
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18776", "address to listen on")
	target := flag.String("target", "http://10.0.2.2:8776", "Cinder API root to forward to")
	fail := flag.String("fail", "os-complete,os-attach", "comma list of action names (the body's top-level key) to fail with HTTP 500")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil {
		log.Fatal(err)
	}
	failing := map[string]bool{}
	for _, a := range strings.Split(*fail, ",") {
		failing[strings.TrimSpace(a)] = true
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/action") {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m map[string]json.RawMessage
			if json.Unmarshal(body, &m) == nil {
				for k := range m {
					if failing[k] {
						log.Printf("faultproxy: failing %s %s (%s)", r.Method, r.URL.Path, k)
						w.Header().Set("Content-Type", "application/json")
						w.WriteHeader(http.StatusInternalServerError)
						_, _ = w.Write([]byte(`{"computeFault": {"code": 500, "message": "injected by faultproxy: ` + k + ` failed"}}`))
						return
					}
				}
			}
		}
		proxy.ServeHTTP(w, r)
	})
	log.Printf("faultproxy: %s -> %s, failing %v", *listen, *target, *fail)
	log.Fatal(http.ListenAndServe(*listen, h))
}
