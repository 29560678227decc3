package host

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/brick-storage/brick/secret"
)

// RedactingHandler masks the Redactor's secrets in every message and
// attribute before the wrapped handler sees them, so no log line can carry
// a secret even when a caller logs a value it did not think of as one.
type RedactingHandler struct {
	next     slog.Handler
	redactor *Redactor
}

// NewRedactingHandler wraps next.
func NewRedactingHandler(next slog.Handler, r *Redactor) *RedactingHandler {
	return &RedactingHandler{next: next, redactor: r}
}

func (h *RedactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *RedactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.redactor.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *RedactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.redactAttr(a)
	}
	return &RedactingHandler{next: h.next.WithAttrs(red), redactor: h.redactor}
}

func (h *RedactingHandler) WithGroup(name string) slog.Handler {
	return &RedactingHandler{next: h.next.WithGroup(name), redactor: h.redactor}
}

func (h *RedactingHandler) redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if v.Kind() != slog.KindGroup && secret.IsKey(a.Key) {
		// Masked by name, whatever the value: a password logged under
		// "password" is hidden even before anyone registered it.
		return slog.String(a.Key, Mask)
	}
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.redactor.Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		red := make([]any, len(group))
		for i, g := range group {
			red[i] = h.redactAttr(g)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		return slog.String(a.Key, h.redactor.Redact(fmt.Sprint(v.Any())))
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}
