package reportfinding

// TextKind says what a text of a report is, so the one hook that cleans
// report text (MapText) can give each the rule and bound of its kind.
type TextKind int

const (
	// TextName is one line naming something: a tool, rule, advisory,
	// package, version, ecosystem, class, branch, repository or commit.
	TextName TextKind = iota
	// TextLine is one line of free text: a fingerprint, a function, a
	// call path.
	TextLine
	// TextProse is text of any number of lines: a title, message, snippet,
	// code excerpt, suppression justification, advisory summary or details.
	TextProse
	// TextPath is a repository-relative path as the parser normalised it.
	TextPath
)

// MapText replaces every text the report carries, its own and its
// findings', by what fn returns for it. It is the list of what a report
// brings to be stored and shown: a text field added to Report, Finding,
// Suppression, Dependency, Usage, Fix or Replacement must be added here,
// beside its declaration, or it reaches storage as the scanner wrote it.
// Values fixed by the parsers (Kind, Urgency, Severity, reachability
// statuses, Dropped reasons) are not report text and are left out.
func (r *Report) MapText(fn func(s string, k TextKind) string) {
	each := func(p *string, k TextKind) { *p = fn(*p, k) }
	for i := range r.Tools {
		each(&r.Tools[i], TextName)
	}
	each(&r.Branch, TextName)
	each(&r.RepositoryURI, TextName)
	each(&r.CommitSHA, TextName)
	each(&r.Category, TextName)
	for i := range r.Findings {
		r.Findings[i].mapText(each)
	}
}

func (f *Finding) mapText(each func(*string, TextKind)) {
	each(&f.Tool, TextName)
	each(&f.RuleID, TextName)
	each(&f.Classification, TextName)
	each(&f.Fingerprint, TextLine)
	each(&f.Path, TextPath)
	each(&f.Title, TextProse)
	each(&f.Message, TextProse)
	each(&f.Snippet, TextProse)
	each(&f.Code, TextProse)
	if s := f.Suppression; s != nil {
		each(&s.Justification, TextProse)
	}
	if d := f.SCA; d != nil {
		d.mapText(each)
	}
	if x := f.Fix; x != nil {
		x.mapText(each)
	}
}

// mapText lists a fix's texts. The code it carries (inserted, deleted,
// resulting lines) is prose: parsers keep it only when the rule leaves it
// as it is (KeepFix), so cleaning never alters what the fix writes.
func (x *Fix) mapText(each func(*string, TextKind)) {
	each(&x.Explanation, TextProse)
	for i := range x.Replacements {
		r := &x.Replacements[i]
		each(&r.Path, TextPath)
		each(&r.Inserted, TextProse)
		each(&r.Deleted, TextProse)
		each(&r.Lines, TextProse)
	}
	each(&x.Diff, TextProse)
	each(&x.FullCode, TextProse)
}

func (d *Dependency) mapText(each func(*string, TextKind)) {
	for _, p := range []*string{&d.Name, &d.Version, &d.Ecosystem, &d.FixVersion, &d.CVE} {
		each(p, TextName)
	}
	for i := range d.IDs {
		each(&d.IDs[i], TextName)
	}
	each(&d.Summary, TextProse)
	each(&d.Details, TextProse)
	each(&d.Manifest, TextPath)
	for i := range d.Reachability.Usages {
		u := &d.Reachability.Usages[i]
		each(&u.File, TextPath)
		each(&u.Function, TextLine)
		each(&u.Path, TextLine)
	}
}
