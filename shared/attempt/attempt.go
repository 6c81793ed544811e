// Package attempt decides how one at-least-once attempt of a stream job
// (a bulk triage operation, an export) ends: done, failed for good with a
// reason, or failed for the stream to deliver again.
package attempt

import (
	"errors"
	"fmt"
	"log/slog"
)

// Permanent is an error no retry fixes: the job ends failed with its
// reason.
type Permanent struct{ Reason string }

func (p *Permanent) Error() string { return p.Reason }

// Job names the job an attempt ran, for End.
type Job struct {
	What    string // "bulk triage", "export": the log's prefix
	Noun    string // "the operation", "the export": the last attempt's reason
	N, Max  int    // this attempt's number and the last one's
	LogAttr []any  // the job's log attributes (company, id)
}

// End is what an attempt that returned err (nil: done) answers to its
// stream. A Permanent error, or any error of the last attempt, is recorded
// by fail (the job ends failed) and answers fail's error; any other error
// is logged and returned, for the stream to deliver the job again.
func End(err error, j Job, log *slog.Logger, fail func(reason string) error) error {
	var perm *Permanent
	switch {
	case err == nil:
		return nil
	case errors.As(err, &perm):
		return fail(perm.Reason)
	case j.N >= j.Max:
		log.Error(j.What+": last attempt failed", append(j.LogAttr, "error", err.Error())...)
		return fail(fmt.Sprintf("%s could not be completed in %d attempts", j.Noun, j.Max))
	}
	log.Warn(j.What+": attempt failed, to be retried", append(j.LogAttr, "attempt", j.N, "error", err.Error())...)
	return err
}
