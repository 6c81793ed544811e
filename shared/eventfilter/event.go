package eventfilter

import (
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Event is what a filter expression sees as `event`: a typed object, so an
// expression is type-checked when it is saved (a misspelled field is a
// compile error naming it). Fields an event does not have are zero ("", 0,
// an empty list).
type Event struct {
	Type      string    `cel:"type"`
	ID        string    `cel:"id"`
	CreatedAt time.Time `cel:"created_at"`
	Project   Project   `cel:"project"`
	// NewFindings are the new issues of a scan event (scan_completed,
	// new_critical_issue, new_high_issue), at most MaxNewFindings.
	NewFindings []Finding `cel:"new_findings"`
	Counts      Counts    `cel:"counts"`
	// Issue is the issue of an issue event (issue_status_changed,
	// sla_breach, risk_acceptance_expired).
	Issue Issue `cel:"issue"`
	// Data is the event's raw data (the webhook payload's "data"), for
	// anything else: JSON numbers are doubles, strings at most MaxText
	// characters, lists and maps at most MaxListed members.
	Data Data `cel:"data"`
}

// Data is the event's raw data as CEL sees it: a map(string, dyn). NewData
// builds one; the zero value is no map (Build always sets one).
type Data struct{ traits.Mapper }

var dataType = types.NewMapType(types.StringType, types.DynType)

// Type is CEL's type of Data (what the type checker declares event.data as).
func (Data) Type() ref.Type { return dataType }

// NewData is m (JSON-decoded values) as Data.
func NewData(m map[string]any) Data {
	return Data{types.DefaultTypeAdapter.NativeToValue(m).(traits.Mapper)}
}

// Project is the project an event is about.
type Project struct {
	ID     int64  `cel:"id"`
	Name   string `cel:"name"`
	Branch string `cel:"branch"`
}

// Finding is one new issue of a scan.
type Finding struct {
	ID      string `cel:"id"`
	Urgency string `cel:"urgency"` // CR, HI, ME, LO, IN
	Rule    string `cel:"rule"`
	CWE     int64  `cel:"cwe"`
	Tool    string `cel:"tool"`
	Path    string `cel:"path"`
	Line    int64  `cel:"line"`
	Package string `cel:"package"`
	Title   string `cel:"title"`
}

// Counts are the numbers an event carries.
type Counts struct {
	// New: new issues (of the event's urgency for new_critical_issue and
	// new_high_issue; of any urgency for scan_completed).
	New int64 `cel:"new"`
	// Findings: the findings a completed scan stored.
	Findings int64 `cel:"findings"`
	// Open, Overdue, DueSoon: the weekly digest's numbers.
	Open    int64 `cel:"open"`
	Overdue int64 `cel:"overdue"`
	DueSoon int64 `cel:"due_soon"`
	// Blocked: the findings a policy violation blocked.
	Blocked int64 `cel:"blocked"`
}

// Issue is the issue of an issue event.
type Issue struct {
	ID             string `cel:"id"`
	Title          string `cel:"title"`
	Status         string `cel:"status"`
	PreviousStatus string `cel:"previous_status"`
	Urgency        string `cel:"urgency"`
}
