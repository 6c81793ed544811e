// Package govulncheck turns govulncheck's output into SCA findings with
// real reachability: `govulncheck -json` (a stream of JSON messages) and
// `govulncheck -format sarif`. One finding per (OSV id, module); its
// status is the most precise level govulncheck reported: a call stack into
// a vulnerable symbol is `reachable` with the stacks' entry points as
// usages, an import of a vulnerable package only is `package_imported`,
// a required module only is `module_required`.
package govulncheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reports/osv"
	"github.com/acme/codescan-api/shared/reports/reporterr"
	"github.com/acme/codescan-api/shared/reports/sarif"
)

// Tool is the findings' tool name.
const Tool = "govulncheck"

// Manifest is the path every finding names: govulncheck scans a module
// from its root and reports no file of its own.
const Manifest = "go.mod"

// maxUsages bounds the call paths kept per finding.
const maxUsages = 20

const format = "govulncheck JSON"

// message is one value of the stream. The types are govulncheck's
// protocol v1.0.0 (golang.org/x/vuln/internal/govulncheck, an internal
// package), reduced to what findings need.
type message struct {
	Config *struct {
		ProtocolVersion string `json:"protocol_version"`
	} `json:"config"`
	OSV     *osv.Entry `json:"osv"`
	Finding *struct {
		OSV          string   `json:"osv"`
		FixedVersion string   `json:"fixed_version"`
		Trace        []*frame `json:"trace"`
	} `json:"finding"`
}

// frame is one step of a trace: trace[0] is the vulnerable module,
// package or symbol, the last frame the entry point in the scanned code.
type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
	Position *struct {
		Filename string `json:"filename"`
		Line     int    `json:"line"`
	} `json:"position"`
}

// levels of a finding, least precise first.
const (
	moduleLevel = iota + 1
	packageLevel
	symbolLevel
)

var statusOf = map[int]string{moduleLevel: reportfinding.ModuleRequired, packageLevel: reportfinding.PackageImported, symbolLevel: reportfinding.Reachable}

// vuln gathers what the stream says of one (OSV id, module).
type vuln struct {
	id, module, version, fixed string
	level                      int
	usages                     []reportfinding.Usage
}

// Parse reads govulncheck's JSON stream, or its SARIF output (a JSON
// object with "runs").
func Parse(data []byte) (reportfinding.Report, error) {
	if err := reporterr.Text(format, data); err != nil {
		return reportfinding.Report{}, err
	}
	if sarif.IsLog(data) {
		return parseSARIF(data)
	}
	entries := map[string]osv.Entry{}
	var order []string
	vulns := map[[2]string]*vuln{}
	dec := json.NewDecoder(bytes.NewReader(data))
	for n := 0; ; n++ {
		var m message
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return reportfinding.Report{}, reporterr.DecodeJSON(format, err)
		}
		if n == 0 && (m.Config == nil || m.Config.ProtocolVersion == "") {
			return reportfinding.Report{}, reporterr.Invalidf(format, `the stream must start with govulncheck's "config" message`)
		}
		switch {
		case m.OSV != nil && m.OSV.ID != "":
			entries[m.OSV.ID] = *m.OSV
		case m.Finding != nil && m.Finding.OSV != "" && len(m.Finding.Trace) > 0 && m.Finding.Trace[0] != nil:
			top := m.Finding.Trace[0]
			if top.Module == "" {
				continue
			}
			key := [2]string{m.Finding.OSV, top.Module}
			v := vulns[key]
			if v == nil {
				if len(vulns) == norm.MaxFindings {
					return reportfinding.Report{}, &reporterr.TooLarge{What: "findings", Limit: norm.MaxFindings}
				}
				v = &vuln{id: key[0], module: key[1]}
				vulns[key] = v
				order = append(order, key[0]+"\x00"+key[1])
			}
			v.add(top, m.Finding.FixedVersion, m.Finding.Trace)
		}
	}
	rep := reportfinding.Report{Tools: []string{Tool}}
	for _, k := range order {
		id, module, _ := strings.Cut(k, "\x00")
		v := vulns[[2]string{id, module}]
		var entries1 []osv.Entry
		if e, ok := entries[id]; ok {
			entries1 = append(entries1, e)
		}
		rep.Findings = append(rep.Findings, v.finding(entries1))
	}
	return rep, nil
}

// add takes one finding message into the vulnerability: the most precise
// level wins, and each symbol-level trace adds its entry point as a usage.
func (v *vuln) add(top *frame, fixed string, trace []*frame) {
	if v.version == "" {
		v.version = top.Version
	}
	if v.fixed == "" {
		v.fixed = fixed
	}
	level := moduleLevel
	switch {
	case top.Function != "":
		level = symbolLevel
	case top.Package != "":
		level = packageLevel
	}
	if level > v.level {
		v.level = level
	}
	if level != symbolLevel || len(v.usages) == maxUsages {
		return
	}
	entry := trace[len(trace)-1]
	if entry == nil {
		return
	}
	u := reportfinding.Usage{Function: norm.Clip(symbol(entry)), Reachable: true}
	if entry.Position != nil {
		u.File, _ = norm.Path(entry.Position.Filename)
		if entry.Position.Line > 0 {
			u.Line = entry.Position.Line
		}
	}
	// The path reads from the entry point to the vulnerable symbol.
	steps := make([]string, 0, len(trace))
	for i := len(trace) - 1; i >= 0; i-- {
		if trace[i] != nil {
			steps = append(steps, symbol(trace[i]))
		}
	}
	u.Path = norm.Clip(strings.Join(steps, " -> "))
	for _, seen := range v.usages {
		if seen.File == u.File && seen.Line == u.Line && seen.Function == u.Function {
			return
		}
	}
	v.usages = append(v.usages, u)
}

// symbol names a frame's function as Go prints it: pkg.Func or
// pkg.Recv.Method.
func symbol(f *frame) string {
	name := f.Function
	if f.Receiver != "" {
		name = strings.TrimPrefix(f.Receiver, "*") + "." + name
	}
	if f.Package != "" {
		return f.Package + "." + name
	}
	return name
}

func (v *vuln) finding(entries []osv.Entry) reportfinding.Finding {
	d := osv.Dependency(v.module, v.version, "Go", []string{v.id}, entries)
	if v.fixed != "" {
		d.FixVersion = norm.ClipID(v.fixed)
	}
	d.Manifest = Manifest
	d.Reachability = reportfinding.Reachability{Status: statusOf[v.level], Usages: v.usages}
	return withUrgency(osv.SCAFinding(Tool, d))
}

// withUrgency sets the urgency of a finding whose advisory carries no
// severity (the Go vulnerability database gives none) from its
// reachability: reachable high, package imported medium, module required
// low. A CVSS score or severity word, when an advisory has one, wins.
func withUrgency(f reportfinding.Finding) reportfinding.Finding {
	if f.SCA.CVSS > 0 || f.SCA.Severity != "UNSPECIFIED" {
		return f
	}
	switch f.SCA.Reachability.Status {
	case reportfinding.Reachable:
		f.Urgency = reportfinding.High
	case reportfinding.PackageImported:
		f.Urgency = reportfinding.Medium
	default:
		f.Urgency = reportfinding.Low
	}
	return f
}
