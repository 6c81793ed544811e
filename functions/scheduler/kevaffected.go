package scheduler

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/exploitfeed"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/store"
	storecomponents "github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The blast radius on a KEV arrival. The catalogue names CVEs, not
// packages; a company knows a CVE's package from its own SCA findings of
// it. So after an import stores the feeds, for every CVE that entered KEV
// in this import, each company's findings of that CVE give the advisory's
// package and affected versions (components.FromFinding: below the
// finding's fix version, else its version), and the upload's blast radius
// (ingest.BlastRadius) finds the company's holders of an affected version
// by the package index and records one component_affected event per
// company, CVE and package, trigger "kev" (ingest.AffectedEventID: a job
// run again records nothing new).
//
// "Entered KEV in this import": the CVE is in the new catalogue and its
// stored value, read before the import (exploits.Lookup, the catalogue's
// CVEs only, about 1,500 items by key), is not in KEV. The first import
// has nothing stored to compare with: it is the baseline and announces
// nothing. The import's Result counts KEV changes but does not name them,
// hence the read before.
//
// A company's findings of the new CVEs are read from its KEV list entries
// (the list the import has just written: ListFilteredSCAIssues, kev=true), at
// most maxKEVFindings per company, for every company (CompanyIDs), and
// only in a run where some CVE entered KEV. Its cost is that of the
// companies' findings in KEV, not of the new CVEs: the per-CVE references
// store/exploits keeps (EXPLOIT#R#<CVE>: company, project, issue key) would
// make it one query per new CVE, but no store read exposes them.

// KEVStore is what the KEV trigger reads besides the job's store: the CVE
// values before the import, the company's SCA findings in KEV, and the
// inventory's package index (ingest.AffectedStore, with the outbox).
type KEVStore struct {
	Components interface {
		HoldersOf(ctx context.Context, companyID int64, pkg string, version string, limit int) ([]storecomponents.Holder, bool, error)
		PackageVersions(ctx context.Context, companyID int64, pkg string) ([]storecomponents.VersionCount, error)
	}
	Exploits interface {
		Lookup(ctx context.Context, cves []string) (map[string]exploits.Enrichment, bool, error)
	}
	Ledger interface {
		RecordEventOnce(ctx context.Context, e schema.Event) (bool, error)
	}
	SCA interface {
		ListFilteredSCAIssues(ctx context.Context, companyID int64, projectID int64, f exploits.Filter, q page.Request) (page.Page[sca.Issue], error)
	}
}

// KEVStoreOf is the areas of st that KEVStore touches: its composition.
func KEVStoreOf(st *store.Store) KEVStore {
	return KEVStore{Components: st.Components, Exploits: st.Exploits, Ledger: st.Ledger, SCA: st.SCA}
}

// Bounds of the KEV trigger: the findings in KEV read per company (pages
// of kevFindingsPage).
const (
	maxKEVFindings  = 5000
	kevFindingsPage = 500
)

// importAndAnnounce imports the feeds (Store.Import), then announces the
// blast radius of the CVEs that entered KEV with this import. A failure
// of the announcement fails the run; those CVEs are then no longer new to
// the next run (their values are stored), so their events are not
// retried.
func importAndAnnounce(ctx context.Context, st Store, cat exploitfeed.Catalog, scores exploitfeed.Scores) (exploits.Result, error) {
	before, imported, err := st.Exploits.Lookup(ctx, slices.Sorted(maps.Keys(cat.Entries)))
	if err != nil {
		return exploits.Result{}, err
	}
	res, err := st.Exploits.Import(ctx, cat, scores)
	if err != nil || !imported {
		return res, err
	}
	entered := map[string]bool{}
	for cve := range cat.Entries {
		if before[cve].KEV == nil {
			entered[cve] = true
		}
	}
	if len(entered) == 0 {
		return res, nil
	}
	companies, err := st.Tenancy.CompanyIDs(ctx)
	if err != nil {
		return res, err
	}
	for _, c := range companies {
		if err := announceKEV(ctx, KEVStore{Components: st.Components, Exploits: st.Exploits, Ledger: st.Ledger, SCA: st.SCA}, c, entered); err != nil {
			return res, err
		}
	}
	return res, nil
}

// announceKEV runs the blast radius of the company's findings of the CVEs
// that entered KEV: one advisory per CVE and package.
func announceKEV(ctx context.Context, st KEVStore, companyID int64, entered map[string]bool) error {
	var advisories []components.Advisory
	at := map[string]int{}
	q := page.Request{Limit: kevFindingsPage}
	for read := 0; read < maxKEVFindings; {
		foundPage, err := st.SCA.ListFilteredSCAIssues(ctx, companyID, 0, exploits.Filter{KEV: true}, q)
		found, res := foundPage.Items, foundPage
		if err != nil {
			return err
		}
		read += len(found)
		for _, f := range found {
			cve := strings.ToUpper(strings.TrimSpace(f.CVE))
			if !entered[cve] {
				continue
			}
			var aliases []string
			for _, id := range f.IDs {
				if id != "" && !strings.EqualFold(id, cve) {
					aliases = append(aliases, id)
				}
			}
			a, err := components.FromFinding(cve, aliases, f.Package.Ecosystem, f.Package.Name, f.Package.Version, f.Package.FixVersion)
			if err != nil {
				continue // an ecosystem without a package URL type: no package to look up
			}
			if n, ok := at[a.Key()]; ok {
				m := &advisories[n]
				m.Ranges = append(m.Ranges, a.Ranges...)
				m.Versions = union(m.Versions, a.Versions)
				m.Aliases = union(m.Aliases, a.Aliases)
				continue
			}
			if len(advisories) == ingest.MaxBlastAdvisories {
				continue
			}
			at[a.Key()] = len(advisories)
			advisories = append(advisories, a)
		}
		if res.Next == "" {
			break
		}
		q.Token = res.Next
	}
	for _, a := range advisories {
		if _, err := ingest.BlastRadius(ctx, ingest.AffectedStore{Components: st.Components, Ledger: st.Ledger}, ingest.Arrival{CompanyID: companyID, Trigger: ingest.TriggerKEV}, a); err != nil {
			return err
		}
	}
	return nil
}

// union is a with b's elements it lacks, in order.
func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}
