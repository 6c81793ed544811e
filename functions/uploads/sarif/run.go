package sarif

import (
	"net/url"
	"path"
	"strconv"
	"strings"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/acme/codescan-api/shared/cwe"
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
	rc := &runContext{run: r, tool: str(r.Tool.Driver.Name), rulesByID: map[string]*gosarif.ReportingDescriptor{}}
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

func (rc *runContext) finding(runIndex, resultIndex int, res *gosarif.Result) Finding {
	rule := rc.rule(res)
	f := Finding{Run: runIndex, Result: resultIndex, Tool: rc.tool, RuleID: str(res.RuleID)}
	if f.RuleID == "" && res.Rule != nil {
		f.RuleID = str(res.Rule.ID)
	}
	if rule != nil {
		if f.RuleID == "" {
			f.RuleID = str(rule.ID)
		}
		switch {
		case rule.ShortDescription != nil && str(rule.ShortDescription.Text) != "":
			f.Title = str(rule.ShortDescription.Text)
		case str(rule.Name) != "":
			f.Title = str(rule.Name)
		}
	}
	if f.Title == "" {
		f.Title = rc.message(res, rule)
	}
	if f.Title == "" {
		f.Title = f.RuleID
	}
	f.Title = clip(f.Title)
	f.CWE = rc.cwe(res, rule)
	f.Path, f.Line = rc.location(res)
	f.Urgency = urgency(res, rule)
	return f
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
		if id, ok := cweOfTag(tag); ok {
			return id, true
		}
	}
	return 0, false
}

func cweOfValue(v any) (int, bool) {
	switch v := v.(type) {
	case string:
		if id, ok := cweOfTag(v); ok {
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

// cweOfTag reads tags written `CWE-89`, `CWE-89: Improper ...`,
// `external/cwe/cwe-089` (CodeQL). Bare numbers are not CWEs in tags.
func cweOfTag(tag string) (int, bool) {
	t := strings.TrimSpace(tag)
	if rest, ok := cutPrefixFold(t, "external/cwe/"); ok {
		return cwe.Parse(rest)
	}
	rest, ok := cutPrefixFold(t, "CWE-")
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end < len(rest) && !strings.ContainsRune(": )]", rune(rest[end])) {
		return 0, false
	}
	return cwe.Parse(rest[:end])
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

// urgency maps a result to CR/HI/ME/LO: from the CVSS-like
// `security-severity` property (result's, else rule's; >= 9.0 CR, >= 7.0 HI,
// >= 4.0 ME, else LO), else from the level (result's, else the rule's
// default, else SARIF's default `warning`; error HI, warning ME, note and
// none LO).
func urgency(res *gosarif.Result, rule *gosarif.ReportingDescriptor) string {
	score, ok := securitySeverity(res.Properties)
	if !ok && rule != nil {
		score, ok = securitySeverity(rule.Properties)
	}
	if ok {
		switch {
		case score >= 9.0:
			return Critical
		case score >= 7.0:
			return High
		case score >= 4.0:
			return Medium
		}
		return Low
	}
	level := res.Level
	if level == "" && rule != nil && rule.DefaultConfiguration != nil {
		level = rule.DefaultConfiguration.Level
	}
	switch level {
	case "error":
		return High
	case "", "warning":
		return Medium
	}
	return Low
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

// location returns the file path and line of the result's first physical
// location (else its analysis target).
func (rc *runContext) location(res *gosarif.Result) (string, int) {
	for _, loc := range res.Locations {
		if loc == nil || loc.PhysicalLocation == nil || loc.PhysicalLocation.ArtifactLocation == nil {
			continue
		}
		line := 0
		if reg := loc.PhysicalLocation.Region; reg != nil && reg.StartLine != nil && *reg.StartLine > 0 {
			line = *reg.StartLine
		}
		return rc.path(loc.PhysicalLocation.ArtifactLocation), line
	}
	if res.AnalysisTarget != nil {
		return rc.path(res.AnalysisTarget), 0
	}
	return "", 0
}

// path turns an artifact location into a repository-relative path where
// the report allows: the artifact's own URI (or the run artifact it points
// at), prefixed by its base when the base is relative, `file://` and leading
// `./` removed, and an absolute path made relative to a base it lies under.
func (rc *runContext) path(al *gosarif.ArtifactLocation) string {
	uri, base := str(al.URI), str(al.URIBaseID)
	if uri == "" && al.Index >= 0 && al.Index < len(rc.run.Artifacts) {
		if a := rc.run.Artifacts[al.Index]; a != nil && a.Location != nil {
			uri, base = str(a.Location.URI), str(a.Location.URIBaseID)
		}
	}
	if uri == "" {
		return ""
	}
	if b, ok := rc.run.OriginalUriBaseIds[base]; ok {
		if prefix := str(b.URI); prefix != "" && !strings.Contains(prefix, ":") && !strings.HasPrefix(prefix, "/") && !isAbs(uri) {
			uri = strings.TrimSuffix(prefix, "/") + "/" + uri
		}
	}
	p := cleanPath(uri)
	if strings.HasPrefix(p, "/") {
		for _, b := range rc.run.OriginalUriBaseIds {
			root := strings.TrimSuffix(cleanPath(str(b.URI)), "/") + "/"
			if root != "/" && strings.HasPrefix(root, "/") && strings.HasPrefix(p, root) {
				return strings.TrimPrefix(p, root)
			}
		}
	}
	return p
}

func isAbs(uri string) bool { return strings.HasPrefix(uri, "/") || strings.Contains(uri, "://") }

// cleanPath strips a file scheme, decodes percent-escapes, and cleans the
// path (`./a/../b` is `b`).
func cleanPath(uri string) string {
	p := strings.ReplaceAll(uri, `\`, "/")
	if rest, ok := cutPrefixFold(p, "file://"); ok {
		p = rest
	}
	if dec, err := url.PathUnescape(p); err == nil {
		p = dec
	}
	p = path.Clean(p)
	if p == "." {
		return ""
	}
	return strings.TrimPrefix(p, "./")
}
