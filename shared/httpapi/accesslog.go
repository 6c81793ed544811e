package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/metrics"
)

// Invocation is what the runtime knows of the request's invocation: set by
// the Lambda adapter (shared/lambdahttp), absent on the dev server.
type Invocation struct {
	// ColdStart is true on the first invocation a process serves.
	ColdStart bool
	// TraceID is the X-Ray trace id of the invocation ("1-…"), when traced.
	TraceID string
}

type invocationKey struct{}

// WithInvocation returns ctx carrying inv, for the request's log line.
func WithInvocation(ctx context.Context, inv Invocation) context.Context {
	return context.WithValue(ctx, invocationKey{}, inv)
}

// caller is filled in by serve once the request is authenticated, so the
// log line written after the handler names who called.
type caller struct{ p *auth.Principal }

type callerKey struct{}

// noteCaller records p as the caller of the request whose context is ctx.
func noteCaller(ctx context.Context, p *auth.Principal) {
	if c, ok := ctx.Value(callerKey{}).(*caller); ok {
		c.p = p
	}
}

// levelOf is the level of a request's log line: server errors are errors,
// client errors warnings (so LOG_LEVEL=warn keeps every failed request and
// drops the successful ones), the rest info.
func levelOf(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// accessLog writes the request's one log line and the edge's metrics. The
// line names the route by its pattern in the route table (the path itself
// only as shown: a credential in it is redacted), the caller by ids, never
// by a credential.
// shown is the route's path with its credential redacted (empty: the
// request's own path), pattern its route table pattern, both made once per
// route.
func (s *Server) accessLog(r *http.Request, group, shown, pattern string, c *caller, status int, start time.Time, id string) {
	if shown == "" {
		shown = r.URL.Path
	}
	attrs := requestAttrs(r, shown, pattern, status, start, id)
	if c != nil && c.p != nil {
		attrs = append(attrs, slog.Int64("company_id", c.p.CompanyID), slog.Int64("user_id", c.p.UserID),
			slog.String("auth", c.p.Via))
		if c.p.KeyID != 0 {
			attrs = append(attrs, slog.Int64("api_key_id", c.p.KeyID))
		}
	}
	s.Log.LogAttrs(r.Context(), levelOf(status), "request", attrs...)
	switch status {
	case http.StatusTooManyRequests:
		s.Metrics.Emit(map[string]string{"Service": "api", "Group": group}, metrics.Value{Name: metrics.RateLimited, Unit: metrics.Count, Value: 1})
	case http.StatusServiceUnavailable:
		s.Metrics.Emit(map[string]string{"Service": "api", "Group": group}, metrics.Value{Name: metrics.Unavailable, Unit: metrics.Count, Value: 1})
	}
}

// requestAttrs are the fields of every request line, matched to a route
// (route is its pattern) or not (route "").
func requestAttrs(r *http.Request, shown, route string, status int, start time.Time, id string) []slog.Attr {
	attrs := make([]slog.Attr, 0, 14)
	attrs = append(attrs,
		slog.String("method", Truncate(r.Method, 16)), slog.String("path", Truncate(shown, maxLoggedValue)))
	if route != "" {
		attrs = append(attrs, slog.String("route", route))
	}
	attrs = append(attrs, slog.Int("status", status),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000), slog.String("request_id", id))
	if inv, ok := r.Context().Value(invocationKey{}).(Invocation); ok {
		attrs = append(attrs, slog.Bool("cold_start", inv.ColdStart))
		if inv.TraceID != "" {
			attrs = append(attrs, slog.String("trace_id", Truncate(inv.TraceID, 128)))
		}
	}
	return attrs
}

// logUnrouted writes the log line of a request no route matched.
func logUnrouted(log *slog.Logger, r *http.Request, status int, start time.Time, id string) {
	log.LogAttrs(r.Context(), levelOf(status), "request", requestAttrs(r, r.URL.Path, "", status, start, id)...)
}
