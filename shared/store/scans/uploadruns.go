package scans

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// UploadRun is the state of a chunked report upload (POST /scan-upload
// with Upload-Offset): how many bytes arrived and the chunks that brought
// them. It lives here, not in a process, because each chunk may reach
// another Lambda instance: a chunk is taken only by a write conditional on
// the offset it read, so of concurrent chunks at one offset exactly one
// is. The chunks' digests tell a chunk sent again (a client retrying after
// a lost answer) from another one at the same offset.
type UploadRun struct {
	ddb.Key
	RunID  string `dynamodbav:"run_id"`
	Length int64  `dynamodbav:"length"` // Upload-Length, fixed by the first chunk
	Offset int64  `dynamodbav:"offset"` // the bytes received: where the next chunk starts
	// Chunks are the chunks received, in order, each "size:digest".
	Chunks []string `dynamodbav:"chunks"`
	// Reserved is what the run holds of its company's pending-upload quota
	// until all its bytes have arrived.
	Reserved  int64 `dynamodbav:"reserved"`
	ExpiresAt int64 `dynamodbav:"expires_at"` // Unix seconds; the table's TTL
}

// UploadChunk is one chunk of a run: its size and the digest of its bytes.
type UploadChunk struct {
	Size   int64
	Digest string
}

func (c UploadChunk) String() string { return strconv.FormatInt(c.Size, 10) + ":" + c.Digest }

// UploadPart is a chunk received and where it starts.
type UploadPart struct {
	Offset int64
	UploadChunk
}

// Parts returns the chunks received, in order.
func (r UploadRun) Parts() []UploadPart {
	parts := make([]UploadPart, len(r.Chunks))
	at := int64(0)
	for i, raw := range r.Chunks {
		size, digest, _ := strings.Cut(raw, ":")
		n, _ := strconv.ParseInt(size, 10, 64)
		parts[i] = UploadPart{Offset: at, UploadChunk: UploadChunk{Size: n, Digest: digest}}
		at += n
	}
	return parts
}

// ChunkAt returns the chunk received at offset, if one starts there.
func (r UploadRun) ChunkAt(offset int64) (UploadChunk, bool) {
	for _, p := range r.Parts() {
		if p.Offset == offset {
			return p.UploadChunk, true
		}
	}
	return UploadChunk{}, false
}

// Complete reports whether every byte of the run has arrived.
func (r UploadRun) Complete() bool { return r.Offset == r.Length }

// UploadQuotaKey is a company's upload quota item (schema.UploadQuotaKey).
func UploadQuotaKey(companyID int64) ddb.Key { return schema.UploadQuotaKey(companyID) }

// GetUploadRun reads the company's run (strongly consistent: a chunk
// decides on it); ddb.ErrNotFound when there is none or it expired at at (an
// expired run is gone for every purpose, even before the TTL deletes it).
func (x *Scans) GetUploadRun(ctx context.Context, companyID int64, runID string, at time.Time) (UploadRun, error) {
	var r UploadRun
	if err := x.t.GetItemConsistent(ctx, schema.UploadRunKey(companyID, runID), &r); err != nil {
		return UploadRun{}, err
	}
	if r.ExpiresAt <= at.Unix() {
		return UploadRun{}, ddb.ErrNotFound
	}
	return r, nil
}

// QuotaError is returned when a new run does not fit in its company's
// quota of pending upload bytes.
type QuotaError struct {
	Pending, Quota, Need int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("pending uploads hold %d of %d bytes; %d more do not fit", e.Pending, e.Quota, e.Need)
}

// StartUploadRun records a new run with its first chunk (r: its key is
// set here) and reserves r.Reserved bytes of the company's quota in the
// same transaction. ddb.ErrConflict when a live run of that id exists (a
// concurrent first chunk took it); *QuotaError when the reservation does
// not fit even once the quota is recounted (the counter may still hold
// runs that expired).
func (x *Scans) StartUploadRun(ctx context.Context, companyID int64, r UploadRun, quota int64, at time.Time) error {
	r.Key = schema.UploadRunKey(companyID, r.RunID)
	free := expression.AttributeNotExists(expression.Name(tabledef.PK)).
		Or(expression.Name(tabledef.TTLAttribute).LessThanEqual(expression.Value(at.Unix())))
	put, err := x.t.TxPut(r, &free)
	if err != nil {
		return err
	}
	pending := expression.Name("pending")
	fits := expression.AttributeNotExists(pending).Or(pending.LessThanEqual(expression.Value(quota - r.Reserved)))
	reserve, err := x.t.TxUpdate(UploadQuotaKey(companyID), expression.
		Add(pending, expression.Value(r.Reserved)).Add(expression.Name("ver"), expression.Value(1)), &fits)
	if err != nil {
		return err
	}
	for recounted := false; ; recounted = true {
		err = x.t.Transact(ctx, []types.TransactWriteItem{put, reserve})
		switch {
		case err == nil:
			return nil
		case ddb.ConditionFailedAt(err, 0):
			return ddb.ErrConflict
		case !ddb.ConditionFailedAt(err, 1):
			return err
		}
		held, err := x.recountPendingUploads(ctx, companyID, at)
		if err != nil {
			return err
		}
		if recounted || held > quota-r.Reserved {
			return &QuotaError{Pending: held, Quota: quota, Need: r.Reserved}
		}
	}
}

// AppendUploadChunk adds c after the bytes r (as read) holds, if the run
// is still exactly as read and alive at at; ddb.ErrConflict otherwise (another
// chunk came first). The chunk that completes the run releases its
// reservation in the same transaction. It returns the run as written.
func (x *Scans) AppendUploadChunk(ctx context.Context, companyID int64, r UploadRun, c UploadChunk, at time.Time) (UploadRun, error) {
	k := schema.UploadRunKey(companyID, r.RunID)
	offset, expires := expression.Name("offset"), expression.Name(tabledef.TTLAttribute)
	cond := expression.AttributeExists(expression.Name(tabledef.PK)).
		And(offset.Equal(expression.Value(r.Offset))).
		And(expires.Equal(expression.Value(r.ExpiresAt))).
		And(expires.GreaterThan(expression.Value(at.Unix())))
	next := r
	next.Key = k
	next.Offset += c.Size
	next.Chunks = append(r.Chunks[:len(r.Chunks):len(r.Chunks)], c.String())
	upd := expression.Set(offset, expression.Value(next.Offset)).
		Set(expression.Name("chunks"), expression.ListAppend(expression.Name("chunks"), expression.Value([]string{c.String()})))
	if !next.Complete() {
		expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
		if err != nil {
			return UploadRun{}, err
		}
		in := ddb.UpdateInput(x.t.Name, k, expr, types.ReturnValueNone)
		res, err := ddb.Call(func() (*dynamodb.UpdateItemOutput, error) { return x.t.DB.UpdateItem(ctx, in) })
		if ddb.IsConditionFailed(err) {
			return UploadRun{}, ddb.ErrConflict
		}
		if err != nil {
			return UploadRun{}, fmt.Errorf("append chunk to run %s: %w", r.RunID, err)
		}
		ddb.Record(ctx, ddb.Writing, res.ConsumedCapacity)
		return next, nil
	}
	// Complete: the run no longer counts against the quota.
	next.Reserved = 0
	claim, err := x.t.TxUpdate(k, upd.Set(expression.Name("reserved"), expression.Value(0)), &cond)
	if err != nil {
		return UploadRun{}, err
	}
	release, err := x.t.TxUpdate(UploadQuotaKey(companyID), expression.
		Add(expression.Name("pending"), expression.Value(-r.Reserved)).Add(expression.Name("ver"), expression.Value(1)), nil)
	if err != nil {
		return UploadRun{}, err
	}
	if err := x.t.Transact(ctx, []types.TransactWriteItem{claim, release}); err != nil {
		return UploadRun{}, err
	}
	return next, nil
}

// UploadQuota is the company's quota counter: at least the reservations of
// its live incomplete runs (runs that expired may still count until a
// reservation that does not fit recounts it).
type UploadQuota struct {
	Pending int64 `dynamodbav:"pending"`
	Ver     int64 `dynamodbav:"ver"`
}

func (x *Scans) uploadQuota(ctx context.Context, companyID int64) (UploadQuota, error) {
	var q UploadQuota
	err := x.t.GetItemConsistent(ctx, UploadQuotaKey(companyID), &q)
	if errors.Is(err, ddb.ErrNotFound) {
		return UploadQuota{}, nil
	}
	return q, err
}

// recountPendingUploads sets the company's counter to the reservations of
// its runs still incomplete and alive at at, and returns it. Runs that
// expired are dropped here, not by a stream on their deletion: the counter
// only ever holds too much, and is corrected when that matters. The write
// is conditional on the counter's version read before the runs, so a run
// started or completed meanwhile sends it round again.
func (x *Scans) recountPendingUploads(ctx context.Context, companyID int64, at time.Time) (int64, error) {
	var held int64
	err := x.t.Retrying(ctx, func() error {
		q, err := x.uploadQuota(ctx, companyID)
		if err != nil {
			return err
		}
		runs, err := x.uploadRuns(ctx, companyID)
		if err != nil {
			return err
		}
		held = 0
		for _, r := range runs {
			if !r.Complete() && r.ExpiresAt > at.Unix() {
				held += r.Reserved
			}
		}
		ver := expression.Name("ver")
		cond := expression.AttributeNotExists(ver).Or(ver.Equal(expression.Value(q.Ver)))
		upd := expression.Set(expression.Name("pending"), expression.Value(held)).Add(ver, expression.Value(1))
		expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(upd).Build()
		if err != nil {
			return err
		}
		in := ddb.UpdateInput(x.t.Name, UploadQuotaKey(companyID), expr, types.ReturnValueNone)
		res, err := ddb.Call(func() (*dynamodb.UpdateItemOutput, error) { return x.t.DB.UpdateItem(ctx, in) })
		if ddb.IsConditionFailed(err) {
			return ddb.ErrConflict
		}
		if err != nil {
			return fmt.Errorf("recount pending uploads: %w", err)
		}
		ddb.Record(ctx, ddb.Writing, res.ConsumedCapacity)
		return nil
	})
	return held, err
}

// uploadRuns reads the company's runs (strongly consistent, only what the
// recount needs). Each live incomplete run holds some quota, which bounds
// how many there are.
func (x *Scans) uploadRuns(ctx context.Context, companyID int64) ([]UploadRun, error) {
	var runs []UploadRun
	err := x.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.UploadRunSKPrefix), &runs)
	return runs, err
}
