package findings

// One finding, two identities. A finding with neither a fingerprint nor a
// snippet of the report's own is identified by its flagged code when the
// run sent the file (POST /code-upload) and by its message when it did
// not (ingest.Fingerprints). Pipelines do not always send the source, so
// ingestion gives such a finding both: its id, and as Alias the id of the
// other form. A scan's membership keeps each member's alias, and before a
// scan is applied every finding that is not a member of the head's scan
// under its own id takes the id of the member it is under the other form:
// its alias is a member's id, or its id is a member's alias. Runs with and
// without source, in any order, then keep one issue per finding (and the
// ids issues were created with: whichever form came first).
//
// Only the head's scan is looked at: a finding fixed earlier and reported
// again under its other form is a new issue, as before.

// headMembers are the ids of the head scan's issues and their aliases.
type headMembers struct {
	ids     []string
	aliases map[string]string // member id -> the other id it answers to
}

// resolveAliases gives found issues the ids of the head scan's members
// they are under their other identity, one member to one finding, and
// keeps the id each was found under as its alias.
func resolveAliases(found []Issue, headIDs []string, headAliases map[string]string) error {
	member := make(map[string]bool, len(headIDs))
	for _, id := range headIDs {
		member[id] = true
	}
	aliasOf := make(map[string]string, len(headAliases)) // alias -> member
	for id, a := range headAliases {
		aliasOf[a] = id
	}
	taken := make(map[string]bool, len(found))
	for _, f := range found {
		taken[f.ID] = true
	}
	for n := range found {
		f := &found[n]
		if member[f.ID] {
			continue
		}
		target := otherForm(f, member, aliasOf)
		if target == "" || taken[target] {
			continue
		}
		taken[target] = true
		if f.Alias == "" || f.Alias == target {
			f.Alias = f.ID
		}
		f.ID = target
		if err := f.setKeys(); err != nil {
			return err
		}
	}
	return nil
}

// otherForm is the head scan's member f is under its other identity, or
// "".
func otherForm(f *Issue, member map[string]bool, aliasOf map[string]string) string {
	switch {
	case f.Alias != "" && member[f.Alias]:
		return f.Alias
	case aliasOf[f.ID] != "":
		return aliasOf[f.ID]
	case f.Alias != "":
		return aliasOf[f.Alias]
	}
	return ""
}

// Aliases are the aliases of issues by id.
func Aliases(found []Issue) map[string]string {
	out := map[string]string{}
	for _, f := range found {
		if f.Alias != "" && f.Alias != f.ID {
			out[f.ID] = f.Alias
		}
	}
	return out
}
