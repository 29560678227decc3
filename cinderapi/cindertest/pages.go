package cindertest

import (
	"net/http"
	"sort"
)

// writeList answers a list as Cinder does: sorted by id, from the
// request's marker on, PageSize records a page, with a "<key>_links" next
// link while more remain. The link is on LinkBase when set (a hostile or
// misconfigured Cinder advertising another origin), else on the fake.
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, key string, items []map[string]any) {
	sort.Slice(items, func(i, j int) bool { return items[i]["id"].(string) < items[j]["id"].(string) })
	if m := r.URL.Query().Get("marker"); m != "" {
		for i, it := range items {
			if it["id"] == m {
				items = items[i+1:]
				break
			}
		}
	}
	out := map[string]any{key: items}
	if s.PageSize > 0 && len(items) > s.PageSize {
		items = items[:s.PageSize]
		out[key] = items
		base := s.URL
		if s.LinkBase != "" {
			base = s.LinkBase
		}
		q := r.URL.Query()
		q.Set("marker", items[len(items)-1]["id"].(string))
		next := base + r.URL.Path + "?" + q.Encode()
		out[key+"_links"] = []any{map[string]any{"rel": "next", "href": next}}
	}
	writeJSON(w, 200, out)
}
