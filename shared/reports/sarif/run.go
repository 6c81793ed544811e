package sarif

import (
	"sort"
	"strconv"
	"strings"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/acme/codescan-api/shared/cwe"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
)

// runContext resolves a run's references: rules (in the driver or an
// extension such as a CodeQL query pack), CWE taxonomies, artifacts and base
// URIs.
type runContext struct {
	run        *gosarif.Run
	tool       string
	rulesByID  map[string]*gosarif.ReportingDescriptor
	components []*gosarif.ToolComponent // the driver, then the extensions
}

func newRunContext(r *gosarif.Run) *runContext {
	rc := &runContext{run: r, tool: norm.ClipID(str(r.Tool.Driver.Name)), rulesByID: map[string]*gosarif.ReportingDescriptor{}}
	rc.components = append([]*gosarif.ToolComponent{r.Tool.Driver}, r.Tool.Extensions...)
	for _, c := range rc.components {
		if c == nil {
			continue
		}
		for _, rule := range c.Rules {
			if rule != nil && str(rule.ID) != "" {
				if _, dup := rc.rulesByID[str(rule.ID)]; !dup {
					rc.rulesByID[str(rule.ID)] = rule
				}
			}
		}
	}
	return rc
}

// finding reads one result, or says why it is dropped.
func (rc *runContext) finding(res *gosarif.Result) (reportfinding.Finding, string) {
	rule := rc.rule(res)
	f := reportfinding.Finding{Tool: rc.tool, RuleID: str(res.RuleID)}
	if f.RuleID == "" && res.Rule != nil {
		f.RuleID = str(res.Rule.ID)
	}
	if f.RuleID == "" && rule != nil {
		f.RuleID = str(rule.ID)
	}
	if f.RuleID = norm.ClipID(f.RuleID); f.RuleID == "" {
		return reportfinding.Finding{}, MissingRuleID
	}
	if rule != nil {
		switch {
		case rule.ShortDescription != nil && str(rule.ShortDescription.Text) != "":
			f.Title = str(rule.ShortDescription.Text)
		case str(rule.Name) != "":
			f.Title = str(rule.Name)
		}
	}
	f.Message = norm.Clip(rc.message(res, rule))
	if f.Title == "" {
		f.Title = f.Message
	}
	if f.Title == "" {
		f.Title = f.RuleID
	}
	f.Title = norm.Clip(f.Title)
	var dropped string
	if f.Path, f.Line, f.EndLine, f.Snippet, dropped = rc.location(res); dropped != "" {
		return reportfinding.Finding{}, dropped
	}
	f.CWE = rc.cwe(res, rule)
	score, hasScore := securitySeverity(res.Properties)
	if !hasScore && rule != nil {
		score, hasScore = securitySeverity(rule.Properties)
	}
	f.Urgency = urgency(res, rule, score, hasScore)
	if f.CWE > 0 || hasScore || hasTag(res.Properties, "security") || (rule != nil && hasTag(rule.Properties, "security")) {
		f.Kind = reportfinding.SAST
	} else {
		f.Kind = reportfinding.Quality
		f.Classification = rc.classification(res, rule)
	}
	f.Fingerprint = fingerprint(res)
	f.Suppression = suppression(res)
	f.Fix = rc.fix(res)
	return f, ""
}

// fingerprint is the result's stable identity as the report gives it:
// partialFingerprints.primaryLocationLineHash (GitHub's and CodeQL's key)
// when present, else the first of its fingerprints, else the first of its
// partialFingerprints, keys in byte order; written `key:value` so values of
// different schemes never compare equal.
func fingerprint(res *gosarif.Result) string {
	if v := res.PartialFingerprints["primaryLocationLineHash"]; v != "" {
		return norm.Clip("primaryLocationLineHash:" + v)
	}
	for _, m := range []map[string]string{res.Fingerprints, res.PartialFingerprints} {
		keys := make([]string, 0, len(m))
		for k, v := range m {
			if v != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			sort.Strings(keys)
			return norm.Clip(keys[0] + ":" + m[keys[0]])
		}
	}
	return ""
}

// rule finds a result's rule: by its index (in the driver, or in the tool
// component the result names) when that agrees with the rule id, else by id
// across all components. The decoder reads an absent index as 0, so an
// index is only trusted when the id confirms it or no id is given.
func (rc *runContext) rule(res *gosarif.Result) *gosarif.ReportingDescriptor {
	id, idx, comp := str(res.RuleID), res.RuleIndex, rc.components[0]
	if res.Rule != nil {
		if id == "" {
			id = str(res.Rule.ID)
		}
		idx = res.Rule.Index
		if res.Rule.ToolComponent != nil {
			comp = rc.component(res.Rule.ToolComponent)
		}
	}
	if comp != nil && idx >= 0 && idx < len(comp.Rules) {
		if r := comp.Rules[idx]; r != nil && (id == "" || str(r.ID) == id) {
			return r
		}
	}
	return rc.rulesByID[id]
}

// component resolves a reference to the driver or an extension: by guid or
// name, else by index into the extensions (SARIF's meaning of the index).
func (rc *runContext) component(ref *gosarif.ToolComponentReference) *gosarif.ToolComponent {
	for _, c := range rc.components {
		if c == nil {
			continue
		}
		if (ref.GuID != nil && str(c.GuID) == *ref.GuID) || (ref.Name != nil && str(c.Name) == *ref.Name) {
			return c
		}
	}
	if ref.GuID == nil && ref.Name == nil && ref.Index >= 0 && ref.Index < len(rc.run.Tool.Extensions) {
		return rc.run.Tool.Extensions[ref.Index]
	}
	return nil
}

// message is the result's text, or the rule's message string it names.
func (rc *runContext) message(res *gosarif.Result, rule *gosarif.ReportingDescriptor) string {
	if t := str(res.Message.Text); t != "" {
		return t
	}
	if rule != nil {
		if m, ok := rule.MessageStrings[str(res.Message.ID)]; ok {
			return str(m.Text)
		}
	}
	return ""
}

// cwe returns the first CWE the report names for the result, looking at
// (1) the result's taxa in a CWE taxonomy, (2) the result's properties,
// (3) the rule's relationships to a CWE taxonomy, (4) the rule's
// properties (`cwe`, or tags such as `CWE-79: ...` or `external/cwe/cwe-079`).
// 0 when there is none.
func (rc *runContext) cwe(res *gosarif.Result, rule *gosarif.ReportingDescriptor) int {
	for _, ref := range res.Taxa {
		if id, ok := rc.cweOfRef(ref); ok {
			return id
		}
	}
	if id, ok := cweOfProperties(res.Properties); ok {
		return id
	}
	if rule == nil {
		return 0
	}
	for _, rel := range rule.Relationships {
		if rel == nil {
			continue
		}
		if id, ok := rc.cweOfRef(rel.Target); ok {
			return id
		}
	}
	id, _ := cweOfProperties(rule.Properties)
	return id
}

// cweOfRef reads a reference to a taxon of a CWE taxonomy: its id, else the
// taxon it points at by guid or index.
func (rc *runContext) cweOfRef(ref *gosarif.ReportingDescriptorReference) (int, bool) {
	if ref == nil || ref.ToolComponent == nil {
		return 0, false
	}
	tax, isCWE := rc.cweTaxonomy(ref.ToolComponent)
	if !isCWE {
		return 0, false
	}
	if ref.ID != nil {
		return cwe.Parse(*ref.ID)
	}
	if tax == nil {
		return 0, false
	}
	for i, t := range tax.Taxa {
		if t != nil && ((ref.GuID != nil && str(t.GuID) == *ref.GuID) || (ref.GuID == nil && i == ref.Index)) {
			return cwe.Parse(str(t.ID))
		}
	}
	return 0, false
}

// cweTaxonomy tells whether a tool component reference names the CWE
// taxonomy, and returns the run's copy of it when the run carries one.
func (rc *runContext) cweTaxonomy(ref *gosarif.ToolComponentReference) (*gosarif.ToolComponent, bool) {
	taxonomies := rc.run.Taxonomies
	var tax *gosarif.ToolComponent
	switch {
	case ref.GuID != nil || ref.Name != nil:
		for _, t := range taxonomies {
			if t != nil && ((ref.GuID != nil && str(t.GuID) == *ref.GuID) || (ref.Name != nil && strings.EqualFold(str(t.Name), *ref.Name))) {
				tax = t
				break
			}
		}
	case ref.Index >= 0 && ref.Index < len(taxonomies):
		tax = taxonomies[ref.Index]
	}
	if tax != nil {
		return tax, strings.EqualFold(str(tax.Name), "CWE")
	}
	return nil, ref.Name != nil && strings.EqualFold(*ref.Name, "CWE")
}

// cweOfProperties reads a `cwe` property (string, number or array of them)
// or a CWE tag.
func cweOfProperties(pb *gosarif.PropertyBag) (int, bool) {
	if pb == nil {
		return 0, false
	}
	for k, v := range pb.Properties {
		if strings.EqualFold(k, "cwe") {
			if id, ok := cweOfValue(v); ok {
				return id, true
			}
		}
	}
	for _, tag := range pb.Tags {
		if id, ok := norm.CWE(tag); ok {
			return id, true
		}
	}
	return 0, false
}

func cweOfValue(v any) (int, bool) {
	switch v := v.(type) {
	case string:
		if id, ok := norm.CWE(v); ok {
			return id, true
		}
		return cwe.Parse(v)
	case float64:
		if v > 0 && v == float64(int(v)) {
			return int(v), true
		}
	case []any:
		for _, e := range v {
			if id, ok := cweOfValue(e); ok {
				return id, true
			}
		}
	}
	return 0, false
}

// urgency maps a result to CR/HI/ME/LO: from the CVSS-like
// `security-severity` property (result's, else rule's) as GitHub does,
// else from the level (result's, else the rule's default, else SARIF's
// default `warning`; an unknown level is read as `warning`): error HI,
// warning ME, note and none LO.
func urgency(res *gosarif.Result, rule *gosarif.ReportingDescriptor, score float64, hasScore bool) string {
	if hasScore {
		return norm.UrgencyOfScore(score)
	}
	level := res.Level
	if level == "" && rule != nil && rule.DefaultConfiguration != nil {
		level = rule.DefaultConfiguration.Level
	}
	switch level {
	case "error":
		return reportfinding.High
	case "note", "none":
		return reportfinding.Low
	}
	return reportfinding.Medium
}

func hasTag(pb *gosarif.PropertyBag, tag string) bool {
	if pb == nil {
		return false
	}
	for _, t := range pb.Tags {
		if strings.EqualFold(strings.TrimSpace(t), tag) {
			return true
		}
	}
	return false
}

func securitySeverity(pb *gosarif.PropertyBag) (float64, bool) {
	if pb == nil {
		return 0, false
	}
	var score float64
	switch v := pb.Properties["security-severity"].(type) {
	case float64:
		score = v
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, false
		}
		score = f
	default:
		return 0, false
	}
	return score, score >= 0 && score <= 10
}

// location returns the file path, lines and snippet of the result's first
// physical location (else its analysis target), or why the path cannot be
// stored. A line below 1 drops the region, not the result.
func (rc *runContext) location(res *gosarif.Result) (path string, line, endLine int, snippet, dropped string) {
	for _, loc := range res.Locations {
		if loc == nil || loc.PhysicalLocation == nil || loc.PhysicalLocation.ArtifactLocation == nil {
			continue
		}
		if path, dropped = rc.path(loc.PhysicalLocation.ArtifactLocation); dropped != "" {
			return "", 0, 0, "", dropped
		}
		if reg := loc.PhysicalLocation.Region; reg != nil && reg.StartLine != nil && *reg.StartLine > 0 {
			line = *reg.StartLine
			endLine = line
			if reg.EndLine != nil && *reg.EndLine >= line {
				endLine = *reg.EndLine
			}
			if reg.Snippet != nil {
				snippet = norm.Clip(str(reg.Snippet.Text))
			}
		}
		return path, line, endLine, snippet, ""
	}
	if res.AnalysisTarget != nil {
		path, dropped = rc.path(res.AnalysisTarget)
	}
	return path, 0, 0, "", dropped
}

// path turns an artifact location into a repository-relative path: the
// artifact's own URI (or the run artifact it points at), prefixed by its
// base when the base is relative; an absolute URI is made relative to an
// absolute base of originalUriBaseIds it lies under. What stays absolute,
// or climbs out of the repository, is refused with the reason.
func (rc *runContext) path(al *gosarif.ArtifactLocation) (string, string) {
	uri, base := str(al.URI), str(al.URIBaseID)
	if uri == "" && al.Index >= 0 && al.Index < len(rc.run.Artifacts) {
		if a := rc.run.Artifacts[al.Index]; a != nil && a.Location != nil {
			uri, base = str(a.Location.URI), str(a.Location.URIBaseID)
		}
	}
	p := norm.Unscheme(uri)
	if p == "" {
		return "", ""
	}
	if norm.IsAbs(p) {
		// Bases in name order, so the same report always gives the same path.
		names := make([]string, 0, len(rc.run.OriginalUriBaseIds))
		for name := range rc.run.OriginalUriBaseIds {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			b := rc.run.OriginalUriBaseIds[name]
			if rel, ok := norm.Within(p, norm.Unscheme(str(b.URI))); ok {
				return norm.Path(rel)
			}
		}
		return norm.Path(p)
	}
	if b, ok := rc.run.OriginalUriBaseIds[base]; ok {
		if prefix := norm.Unscheme(str(b.URI)); prefix != "" && !norm.IsAbs(prefix) {
			p = strings.TrimSuffix(prefix, "/") + "/" + p
		}
	}
	return norm.Path(p)
}
