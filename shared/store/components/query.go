package components

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	comp "github.com/acme/codescan-api/shared/components"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Holder is one holding of a package: a project branch whose engine's
// uploads list it, at a version, and that engine's last scan there.
type Holder struct {
	ProjectID   int64
	ProjectName string
	Branch      string
	Engine      string
	PURL        string
	Version     string
	Ecosystem   string
	Relation    string
	Licenses    []string
	ScanID      string
	ScanAt      time.Time
}

// HolderQuery selects a package's holders: every version, one Version, or
// (Versions non-nil) the versions listed. View names the selection for
// page tokens (a token opens only the view it came from).
type HolderQuery struct {
	Package  string
	Version  string
	Versions []string
	View     string
}

// maxInOperands is DynamoDB's limit of operands of one IN.
const maxInOperands = 100

// list is the query's list on the package index: the package's GSI1
// partition, one version's key range, or a filter on the versions.
func (q HolderQuery) list(companyID int64) page.List {
	l := page.List{Index: tabledef.GSI1, Partition: schema.ComponentPackagePK(companyID, q.Package), Forward: true, View: q.View}
	switch {
	case q.Version != "":
		l.Range = page.Prefix(schema.ComponentVersionPrefix(q.Version))
	case q.Versions != nil:
		f := versionFilter(q.Versions)
		l.Filter = &f
	}
	return l
}

// versionFilter is version IN (…), in groups of at most 100 operands.
func versionFilter(vs []string) expression.ConditionBuilder {
	var conds []expression.ConditionBuilder
	for start := 0; start < len(vs); start += maxInOperands {
		part := vs[start:min(start+maxInOperands, len(vs))]
		rest := make([]expression.OperandBuilder, 0, len(part)-1)
		for _, v := range part[1:] {
			rest = append(rest, expression.Value(v))
		}
		conds = append(conds, expression.Name("version").In(expression.Value(part[0]), rest...))
	}
	if len(conds) == 1 {
		return conds[0]
	}
	return expression.Or(conds[0], conds[1], conds[2:]...)
}

// ListHolders reads one page of a package's holders, in version, project,
// branch and engine order, each with its set's last scan (the page's
// heads read in one batch). A query with an empty Versions list has no
// holders. The list keeps no count (the version directory does: see
// PackageVersions).
func (c *Components) ListHolders(ctx context.Context, companyID int64, q HolderQuery, r page.Request) (page.Page[Holder], error) {
	if q.Versions != nil && len(q.Versions) == 0 {
		return page.Of([]Holder{}, page.Result{Offset: r.Offset}), nil
	}
	its, err := page.ReadPage[item](ctx, c.t, q.list(companyID), r)
	if err != nil {
		return page.Page[Holder]{}, err
	}
	out, err := c.withHeads(ctx, companyID, its.Items)
	if err != nil {
		return page.Page[Holder]{}, err
	}
	return page.Page[Holder]{Items: out, Offset: its.Offset, Next: its.Next}, nil
}

// withHeads joins items with their sets' heads.
func (c *Components) withHeads(ctx context.Context, companyID int64, its []item) ([]Holder, error) {
	keys := make([]ddb.Key, 0, len(its))
	seen := map[ddb.Key]bool{}
	for _, it := range its {
		k := schema.ComponentHeadKey(companyID, it.ProjectID, it.Branch, it.Engine)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	heads, err := c.t.ReadBatch(ctx, keys, false)
	if err != nil {
		return nil, err
	}
	out := make([]Holder, 0, len(its))
	for _, it := range its {
		h := Holder{ProjectID: it.ProjectID, Branch: it.Branch, Engine: it.Engine, PURL: it.PURL, Version: it.Version,
			Ecosystem: it.Ecosystem, Relation: it.Relation, Licenses: it.Licenses}
		if raw, ok := heads[schema.ComponentHeadKey(companyID, it.ProjectID, it.Branch, it.Engine)]; ok {
			var hd head
			if err := attributevalue.UnmarshalMap(raw, &hd); err != nil {
				return nil, fmt.Errorf("component head: %w", err)
			}
			h.ProjectName, h.ScanID = hd.ProjectName, hd.ScanID
			h.ScanAt, _ = time.Parse("2006-01-02T15:04:05.000000Z", hd.ScanAt)
		}
		if h.Licenses == nil {
			h.Licenses = []string{}
		}
		out = append(out, h)
	}
	return out, nil
}

// VersionCount is one version of a package the company holds and how many
// holders (project, branch, engine) it has.
type VersionCount struct {
	Version   string
	Ecosystem string
	Holders   int64
}

// PackageVersions reads a package's version directory: every version some
// holder has, in key order. It costs the package's distinct versions,
// whatever the size of the company.
func (c *Components) PackageVersions(ctx context.Context, companyID int64, pkg string) ([]VersionCount, error) {
	var cs []counter
	if err := c.held(ctx, schema.ComponentVersionKey(companyID, pkg, "").PK, &cs); err != nil {
		return nil, err
	}
	out := make([]VersionCount, 0, len(cs))
	for _, x := range cs {
		out = append(out, VersionCount{Version: x.Version, Ecosystem: x.Ecosystem, Holders: x.N})
	}
	return out, nil
}

// PackageProjects counts the projects holding some version of a package
// (its project directory: one item per project that ever held it).
func (c *Components) PackageProjects(ctx context.Context, companyID int64, pkg string) (int, error) {
	var cs []counter
	if err := c.held(ctx, schema.ComponentProjectKey(companyID, pkg, 0).PK, &cs); err != nil {
		return 0, err
	}
	return len(cs), nil
}

// held reads a directory partition's counters above zero.
func (c *Components) held(ctx context.Context, pk string, out *[]counter) error {
	kc := expression.Key(tabledef.PK).Equal(expression.Value(pk))
	filter := expression.Name("n").GreaterThan(expression.Value(0))
	var start map[string]types.AttributeValue
	for {
		page, next, err := c.t.QueryRaw(ctx, "", kc, &filter, true, 0, start)
		if err != nil {
			return err
		}
		var part []counter
		if err := attributevalue.UnmarshalListOfMaps(page, &part); err != nil {
			return err
		}
		*out = append(*out, part...)
		if next == nil {
			return nil
		}
		start = next
	}
}

// HoldersOf reads up to limit holders of one version of a package (the
// blast radius of an advisory), and whether more exist.
func (c *Components) HoldersOf(ctx context.Context, companyID int64, pkg, version string, limit int) ([]Holder, bool, error) {
	hs, err := c.ListHolders(ctx, companyID, HolderQuery{Package: pkg, Version: version, View: "version"}, page.Request{Limit: limit})
	return hs.Items, hs.Next != "", err
}

// ComponentSet reads one engine's set on a project branch, in package URL
// order (one Query of the branch's partition).
func (c *Components) ComponentSet(ctx context.Context, companyID, projectID int64, branch, engine string) ([]comp.Component, error) {
	var its []item
	pk := schema.ComponentSetPK(companyID, projectID, branch)
	if err := c.t.QueryAll(ctx, "", ddb.PKBeginsWith(pk, schema.ComponentSK(engine, "")), true, &its); err != nil {
		return nil, err
	}
	out := make([]comp.Component, 0, len(its))
	for _, it := range its {
		out = append(out, comp.Component{PURL: it.PURL, Package: it.Package, Version: it.Version, Ecosystem: it.Ecosystem,
			Relation: it.Relation, Licenses: it.Licenses})
	}
	return out, nil
}
