package attempt

import (
	"errors"
	"io"
	"log/slog"
	"testing"
)

func TestEnd(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	busy, failErr := errors.New("throttled"), errors.New("could not record")
	for _, c := range []struct {
		name       string
		err        error
		n          int
		failWith   error
		want       error
		wantReason string
	}{
		{"done", nil, 1, nil, nil, ""},
		{"permanent", &Permanent{Reason: "bad filters"}, 1, nil, nil, "bad filters"},
		{"retried", busy, 2, nil, busy, ""},
		{"last attempt", busy, 3, nil, nil, "the export could not be completed in 3 attempts"},
		{"failure not recorded", &Permanent{Reason: "x"}, 1, failErr, failErr, "x"},
	} {
		reason := ""
		got := End(c.err, Job{What: "export", Noun: "the export", N: c.n, Max: 3}, log, func(r string) error {
			reason = r
			return c.failWith
		})
		if !errors.Is(got, c.want) || (c.want == nil && got != nil) || reason != c.wantReason {
			t.Errorf("%s: %v (reason %q), want %v (reason %q)", c.name, got, reason, c.want, c.wantReason)
		}
	}
}
