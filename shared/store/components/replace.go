package components

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	comp "github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Changes is what a replacement wrote.
type Changes struct {
	Added, Removed, Changed, Unchanged int
	// Stale: a later scan of the engine already wrote the set, so this
	// one changed nothing.
	Stale bool
}

// ReplaceComponents makes list the set of ref's engine on its branch. It
// reads the current set (one Query of the branch's partition), then writes
// only what differs: a new component is put, a gone one deleted, a changed
// one (relation, licences) put again, each new or gone one moving its
// package's version and project counters in the same transaction (chunks
// of at most 100 items), every write conditional on what was read; a
// concurrent writer of the same set makes it read again. Re-running it
// with the same list writes nothing but the head. A scan older than the
// one the head names changes nothing (Stale).
func (c *Components) ReplaceComponents(ctx context.Context, ref SetRef, list []comp.Component) (Changes, error) {
	if ref.CompanyID <= 0 || ref.ProjectID <= 0 || ref.Engine == "" {
		return Changes{}, fmt.Errorf("%w: a component set needs a company, a project and an engine", ddb.ErrInvalid)
	}
	var out Changes
	err := c.t.Retrying(ctx, func() error {
		var err error
		out, err = c.replace(ctx, ref, list)
		return err
	})
	return out, err
}

func (c *Components) replace(ctx context.Context, ref SetRef, list []comp.Component) (Changes, error) {
	hk := schema.ComponentHeadKey(ref.CompanyID, ref.ProjectID, ref.Branch, ref.Engine)
	var h head
	switch err := c.t.GetItemConsistent(ctx, hk, &h); {
	case errors.Is(err, ddb.ErrNotFound):
	case err != nil:
		return Changes{}, err
	case h.ScanAt > stamp(ref.ScanAt):
		return Changes{Stale: true}, nil
	}
	var current []item
	pk := schema.ComponentSetPK(ref.CompanyID, ref.ProjectID, ref.Branch)
	if err := c.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(pk, schema.ComponentSK(ref.Engine, "")), &current); err != nil {
		return Changes{}, err
	}
	ops, ch := diff(current, items(ref, list))
	if err := c.write(ctx, ref.CompanyID, ops); err != nil {
		return Changes{}, err
	}
	cond := expression.AttributeNotExists(expression.Name(tabledef.PK)).Or(expression.Name("scan_at").LessThanEqual(expression.Value(stamp(ref.ScanAt))))
	err := c.t.PutItem(ctx, head{Key: hk, CompanyID: ref.CompanyID, ProjectID: ref.ProjectID, ProjectName: ref.ProjectName,
		Branch: ref.Branch, Engine: ref.Engine, ScanID: ref.ScanID, ScanAt: stamp(ref.ScanAt), Count: len(list)}, &cond)
	if errors.Is(err, ddb.ErrConflict) { // a later scan wrote its head meanwhile: its set wins on its retry
		return ch, nil
	}
	return ch, err
}

// items are the set's items of list.
func items(ref SetRef, list []comp.Component) map[string]item {
	out := make(map[string]item, len(list))
	pk := schema.ComponentSetPK(ref.CompanyID, ref.ProjectID, ref.Branch)
	for _, x := range list {
		out[x.PURL] = item{
			Key:    ddb.Key{PK: pk, SK: schema.ComponentSK(ref.Engine, x.PURL)},
			GSI1PK: schema.ComponentPackagePK(ref.CompanyID, x.Package), GSI1SK: schema.ComponentPackageSK(x.Version, ref.ProjectID, ref.Branch, ref.Engine),
			CompanyID: ref.CompanyID, ProjectID: ref.ProjectID, Branch: ref.Branch, Engine: ref.Engine,
			PURL: x.PURL, Package: x.Package, Version: x.Version, Ecosystem: x.Ecosystem, Relation: x.Relation, Licenses: x.Licenses,
		}
	}
	return out
}

// op is one write of a replacement: put is the item to write (nil: delete
// old), old the item read (nil: new).
type op struct{ put, old *item }

// diff compares the set read with the one wanted.
func diff(current []item, want map[string]item) ([]op, Changes) {
	var ops []op
	var ch Changes
	seen := map[string]bool{}
	for i := range current {
		old := &current[i]
		seen[old.PURL] = true
		w, ok := want[old.PURL]
		switch {
		case !ok:
			ops = append(ops, op{old: old})
			ch.Removed++
		case same(*old, w):
			ch.Unchanged++
		default:
			ops = append(ops, op{put: &w, old: old})
			ch.Changed++
		}
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		if !seen[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		w := want[k]
		ops = append(ops, op{put: &w})
		ch.Added++
	}
	return ops, ch
}

func same(a, b item) bool {
	return a.Key == b.Key && a.GSI1PK == b.GSI1PK && a.GSI1SK == b.GSI1SK && a.Relation == b.Relation &&
		a.Ecosystem == b.Ecosystem && a.Version == b.Version && slices.Equal(a.Licenses, b.Licenses)
}

// move is a counter's change within one transaction.
type move struct {
	key                ddb.Key
	delta              int64
	version, ecosystem string
}

// write sends ops in transactions of at most ddb.MaxTxItems items: each
// op's item write and the counter items its chunk moves (one update per
// counter and chunk).
func (c *Components) write(ctx context.Context, companyID int64, ops []op) error {
	for len(ops) > 0 {
		n, moves := 0, map[ddb.Key]*move{}
		for n < len(ops) {
			next := movesOf(companyID, ops[n])
			added := 0
			for _, m := range next {
				if moves[m.key] == nil {
					added++
				}
			}
			if n+1+len(moves)+added > ddb.MaxTxItems {
				break
			}
			for _, m := range next {
				if cur := moves[m.key]; cur != nil {
					cur.delta += m.delta
				} else {
					mm := m
					moves[m.key] = &mm
				}
			}
			n++
		}
		if err := c.transact(ctx, ops[:n], moves); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// movesOf are the counter moves of one op: a new holder adds one to its
// version and project counters, a gone one takes one off.
func movesOf(companyID int64, o op) []move {
	var out []move
	add := func(it *item, d int64) {
		out = append(out,
			move{key: schema.ComponentVersionKey(companyID, it.Package, it.Version), delta: d, version: it.Version, ecosystem: it.Ecosystem},
			move{key: schema.ComponentProjectKey(companyID, it.Package, it.ProjectID), delta: d})
	}
	switch {
	case o.old == nil:
		add(o.put, 1)
	case o.put == nil:
		add(o.old, -1)
	}
	return out
}

func (c *Components) transact(ctx context.Context, ops []op, moves map[ddb.Key]*move) error {
	tx := make([]types.TransactWriteItem, 0, len(ops)+len(moves))
	for _, o := range ops {
		w, err := c.txOp(o)
		if err != nil {
			return err
		}
		tx = append(tx, w)
	}
	keys := make([]ddb.Key, 0, len(moves))
	for k, m := range moves {
		if m.delta != 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b ddb.Key) int { return cmpKey(a, b) })
	for _, k := range keys {
		m := moves[k]
		upd := expression.Add(expression.Name("n"), expression.Value(m.delta))
		if m.version != "" {
			upd = upd.Set(expression.Name("version"), expression.Value(m.version)).Set(expression.Name("ecosystem"), expression.Value(m.ecosystem))
		}
		w, err := c.t.TxUpdate(k, upd, nil)
		if err != nil {
			return err
		}
		tx = append(tx, w)
	}
	return c.t.Transact(ctx, tx)
}

func cmpKey(a, b ddb.Key) int {
	if a.PK != b.PK {
		if a.PK < b.PK {
			return -1
		}
		return 1
	}
	switch {
	case a.SK < b.SK:
		return -1
	case a.SK > b.SK:
		return 1
	}
	return 0
}

// txOp is an op's conditional write: a new item only if absent, a changed
// or gone one only if it is still as read (same GSI1 sort key and
// relation: what the counters were moved for).
func (c *Components) txOp(o op) (types.TransactWriteItem, error) {
	if o.old == nil {
		return c.t.TxPutNew(*o.put)
	}
	cond := expression.Name("GSI1SK").Equal(expression.Value(o.old.GSI1SK)).And(expression.Name("relation").Equal(expression.Value(o.old.Relation)))
	if o.put == nil {
		return c.t.TxDelete(o.old.Key, cond)
	}
	return c.t.TxPut(*o.put, &cond)
}
