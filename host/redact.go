package host

import (
	"sort"
	"strings"
	"sync"
)

// Mask replaces every secret in log lines, errors and output.
const Mask = "***"

// Redactor remembers secrets as they become known (a CHAP password parsed
// from connection info, a token from auth) and masks them in any text.
// One Redactor is shared by the runner and the logger of a process, so a
// secret registered once is hidden everywhere. Safe for concurrent use.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // longest first, so a secret containing another is masked whole
}

// NewRedactor returns a Redactor that masks the given secrets.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add registers secrets; empty strings are ignored.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		if s == "" || contains(r.secrets, s) {
			continue
		}
		r.secrets = append(r.secrets, s)
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
}

// Redact returns s with every registered secret and every extra secret masked.
func (r *Redactor) Redact(s string, extra ...string) string {
	for _, e := range extra {
		if e != "" {
			s = strings.ReplaceAll(s, e, Mask)
		}
	}
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, Mask)
	}
	return s
}

// RedactArgs masks secrets in each element of argv, returning a new slice.
func (r *Redactor) RedactArgs(argv []string, extra ...string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = r.Redact(a, extra...)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
