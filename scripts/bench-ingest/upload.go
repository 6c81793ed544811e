package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/internal/localstream"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/reportstore/s3reports"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// chunkSize: reports larger than one chunk go by the chunked protocol, as
// a gzip file (the real client chunks 1 MiB at a time, and only reports over
// 50 MiB; the bench chunks smaller ones so the 25,000-result report, some
// 400 KiB compressed, takes the chunked path).
const chunkSize = 128 << 10

// uploadBench measures, for each size, a gzip SARIF report of n results
// (over n/10 files and 40 CWEs, like report) from its upload through the
// uploads handler (chunked when over a chunk) to the scan complete (the
// ingester on the table's stream, through the local poller), beside two
// raw BatchWriteItem floors of the n issue items the ingestion stored,
// written again under keys of their own, in batches of 25 on parallel
// writers, on the same DynamoDB Local: the floor (the items as stored,
// index keys included, on a table made as the product's, stream on), and a
// bare floor (no index keys, no stream); and a fenced floor, the floor's
// items in fenced transactions one after the other, as the write path
// writes a scan's issues under its lease (docs/benchmarks.md: on DynamoDB
// Local no fenced write comes near a batch). Several rounds of each, since
// one run on a shared machine varies by a fifth.
func uploadBench(ctx context.Context, endpoint, sizes string) error {
	if endpoint == "" {
		return fmt.Errorf("DYNAMODB_ENDPOINT is unset (run it with `make bench`)")
	}
	b, st, err := benchTables(ctx, endpoint)
	if err != nil {
		return err
	}
	pollCtx, stop := context.WithCancel(ctx)
	defer stop()
	if b.h, err = startIngestion(ctx, pollCtx, st, endpoint); err != nil {
		return err
	}
	if b.company, b.key, err = tenant(ctx, st); err != nil {
		return err
	}

	// The worker runs under the ingester function's GOMEMLIMIT, as in AWS.
	limit := ingesterMemLimit()
	debug.SetMemoryLimit(limit)

	rounds := positiveEnv("BENCH_UPLOAD_ROUNDS", 3)
	if b.devSizes = parseSizes(envOr("BENCH_DEVSERVER_SIZES", "25000")); len(b.devSizes) > 0 {
		if b.dev, err = startDevServer(ctx); err != nil {
			return err
		}
		defer b.dev.proc.Stop()
	}
	printUploadHeader(limit, b.floor.writers, rounds)
	// One unmeasured upload and floor first: DynamoDB Local's JVM compiles
	// its write paths on the first calls, which the first size would pay.
	if err := warmUp(ctx, b.h, b.watch, b.company, b.key, b.floor, b.bare, b.fenced); err != nil {
		return err
	}
	if b.dev != nil {
		if err := b.dev.warmUp(ctx); err != nil {
			return err
		}
	}
	var breakdown []string
	for k, n := range parseSizes(sizes) {
		line, err := b.measureSize(ctx, k, n, rounds)
		if err != nil {
			return err
		}
		breakdown = append(breakdown, line)
	}
	fmt.Println("\nDynamoDB calls of each size's first upload and its ingestion, busiest first (time in calls, concurrent calls each counting in full;")
	fmt.Println("then when the first call started and the last ended, after the upload began):")
	for _, b := range breakdown {
		fmt.Println(b)
	}
	printDevRows(b.devRows)
	return nil
}

// uploadBed is what the upload bench measures with: the uploads handler,
// the uncounted store it watches scans through, the counter of the
// upload's and worker's DynamoDB calls, the tenant, and the three floors.
type uploadBed struct {
	h                   http.Handler
	watch               *store.Store
	stats               *callStats
	company             int64
	key                 string
	floor, bare, fenced floorKind
	// dev is the dev server the sizes of devSizes are also uploaded to,
	// each round right after the bench's own; devRows their figures.
	dev      *devServer
	devSizes []int
	devRows  []devRow
}

// benchTables creates the tables of the upload bench on the DynamoDB at
// endpoint: the product's (returned, whose calls stats adds up), then the
// floor's, the bare floor's and the fenced floor's.
func benchTables(ctx context.Context, endpoint string) (*uploadBed, *store.Store, error) {
	db, err := config.NewDynamoDB(ctx, endpoint)
	if err != nil {
		return nil, nil, err
	}
	// The upload and the worker call DynamoDB through a client that adds
	// up their calls; the bench's own polling does not.
	b := &uploadBed{stats: newCallStats()}
	counted := dynamodb.New(db.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, b.stats.middleware) })
	st := store.New(counted, fmt.Sprintf("bench_upload_%d", time.Now().UnixNano()))
	if err := bulkload.CreateTable(ctx, st, true); err != nil {
		return nil, nil, err
	}
	b.watch = store.New(db, st.TableName())
	// The floor's writers: DynamoDB Local stores faster with more of them
	// (on 2 cores, 4 writers took some 26 s for 25,000 items, 8 some 20
	// and 16 some 17), so the floor is the fastest it goes.
	writers := positiveEnv("BENCH_FLOOR_WRITERS", 16)
	b.floor = floorKind{table: store.New(db, fmt.Sprintf("bench_floor_%d", time.Now().UnixNano())), product: true, writers: writers}
	b.bare = floorKind{table: store.New(db, fmt.Sprintf("bench_bare_%d", time.Now().UnixNano())), writers: writers}
	b.fenced = floorKind{table: store.New(db, fmt.Sprintf("bench_fenced_%d", time.Now().UnixNano())), product: true, fenced: true}
	for _, f := range []floorKind{b.floor, b.bare, b.fenced} {
		if err := bulkload.CreateTable(ctx, f.table, f.product); err != nil {
			return nil, nil, err
		}
	}
	return b, st, nil
}

// startIngestion starts the ingester on st's stream (through the local
// poller, until pollCtx ends) and returns the uploads handler over st.
func startIngestion(ctx, pollCtx context.Context, st *store.Store, endpoint string) (http.Handler, error) {
	bucket, err := s3reports.FromEnv(ctx)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	streams, err := localstream.NewClient(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	in := &ingester.Ingester{Store: ingester.StoreOf(st), Reports: bucket, Log: log}
	go func() {
		_ = (&localstream.Poller{DB: st.Client(), Table: st.TableName(), Log: log, Streams: streams, Idle: 20 * time.Millisecond,
			Consumers: []localstream.Consumer{in.HandleImage}}).Run(pollCtx)
	}()
	srv := &httpapi.Server{Auth: auth.New(st.Tenancy, auth.JWTConfig{}), Log: log}
	return uploads.New(config.Deps{Server: srv, Store: st, Reports: bucket}), nil
}

// positiveEnv is the environment variable name as a positive integer, else
// def.
func positiveEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// printUploadHeader prints what the upload table measures and its header.
func printUploadHeader(limit int64, writers, rounds int) {
	fmt.Printf("\nUpload to countable (GOMEMLIMIT %d MiB, the ingester function's): a gzip SARIF report of N results uploaded (in 128 KiB chunks past 128 KiB)\n", limit>>20)
	fmt.Printf("and ingested by the worker, beside the same N issue items written again with BatchWriteItem (25 a call, %d writers): the floor\n", writers)
	fmt.Println("(as stored, index keys included, on a table made as the product's, stream on), a bare floor (no index keys, no stream), and a fenced")
	fmt.Println("floor: the same items as the floor's in transactions of 99 puts and a condition check on one head item, one after the other, as the")
	fmt.Println("write path stores a scan's issues under its branch's lease (the fastest fenced write on DynamoDB Local: see docs/benchmarks.md).")
	fmt.Printf("Each size is measured in %d rounds (BENCH_UPLOAD_ROUNDS), each an upload (a first scan of a project of its own) then its floors;\n", rounds)
	fmt.Println("times are medians, the ratio is the median of the rounds' ratios, and the rounds' ratios follow it.")
	fmt.Println("| N | gzip KiB | chunks | upload answered s | countable s | results/s | floor s | items/s | ratio | rounds' ratios | bare floor s | ratio to bare | fenced floor s | ratio to fenced | rounds' ratios to fenced | peak heap MiB |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
}

// measureSize measures the k-th size, n results, in rounds and prints its
// row; it returns the breakdown line of its first round's DynamoDB calls.
func (b *uploadBed) measureSize(ctx context.Context, k, n, rounds int) (string, error) {
	body, err := gzipSARIF(n)
	if err != nil {
		return "", err
	}
	var rs []round
	var breakdown string
	for r := range rounds {
		got, err := measure(ctx, b.h, b.watch, b.stats, b.company, b.key, fmt.Sprintf("bench-%d-%d-%d", k, n, r), n, body, b.floor, b.bare, b.fenced)
		if err != nil {
			return "", err
		}
		if r == 0 {
			breakdown = fmt.Sprintf("- %d results:%s", n, got.calls)
		}
		if b.dev != nil && slices.Contains(b.devSizes, n) {
			if got.devAnswered, got.dev, err = b.dev.measure(ctx, fmt.Sprintf("bench-dev-%d-%d-%d", k, n, r), n, body); err != nil {
				return "", err
			}
		}
		rs = append(rs, got)
	}
	if b.dev != nil && slices.Contains(b.devSizes, n) {
		b.devRows = append(b.devRows, devRow{n: n, rounds: rs})
	}
	took, floorTook := median(rs, func(r round) float64 { return r.took }), median(rs, func(r round) float64 { return r.floor })
	var ratios, fencedRatios []string
	var heap uint64
	for _, r := range rs {
		ratios = append(ratios, fmt.Sprintf("%.2f", r.took/r.floor))
		fencedRatios = append(fencedRatios, fmt.Sprintf("%.2f", r.took/r.fenced))
		heap = max(heap, r.heap)
	}
	fmt.Printf("| %d | %d | %d | %.2f | %.1f | %.0f | %.1f | %.0f | %.2f | %s | %.1f | %.2f | %.1f | %.2f | %s | %d |\n", n, len(body)>>10, rs[0].chunks,
		median(rs, func(r round) float64 { return r.answered }), took, float64(n)/took, floorTook, float64(n)/floorTook,
		median(rs, func(r round) float64 { return r.took / r.floor }), strings.Join(ratios, " "),
		median(rs, func(r round) float64 { return r.bare }), median(rs, func(r round) float64 { return r.took / r.bare }),
		median(rs, func(r round) float64 { return r.fenced }), median(rs, func(r round) float64 { return r.took / r.fenced }),
		strings.Join(fencedRatios, " "), heap>>20)
	return breakdown, nil
}

// round is one measured upload and its floors, in seconds.
type round struct {
	chunks                              int
	answered, took, floor, bare, fenced float64
	devAnswered, dev                    float64 // the same upload to the dev server, when measured
	heap                                uint64
	calls                               string
}

// median is the median of f over the rounds (the upper one of an even
// number).
func median(rs []round, f func(round) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// measure uploads body into a project of its own, waits until its n
// results are countable, then writes the items it stored to each floor.
func measure(ctx context.Context, h http.Handler, watch *store.Store, stats *callStats, company int64, key, project string, n int, body []byte, floor, bare, fenced floorKind) (round, error) {
	runtime.GC()
	stats.take(time.Now())
	peak := watchHeap()
	start := time.Now()
	scanID, chunks, err := upload(h, key, project, n, body)
	if err != nil {
		peak()
		return round{}, err
	}
	answered := time.Since(start)
	err = waitComplete(ctx, watch, company, scanID, n)
	took := time.Since(start)
	r := round{chunks: chunks, answered: answered.Seconds(), took: took.Seconds(), heap: peak(), calls: stats.take(start)}
	if err != nil {
		return r, err
	}
	items, err := storedItems(ctx, watch, company, scanID)
	if err != nil {
		return r, err
	}
	floorTook, err := floor.store(ctx, items)
	if err != nil {
		return r, err
	}
	bareTook, err := bare.store(ctx, items)
	if err != nil {
		return r, err
	}
	fencedTook, err := fenced.store(ctx, items)
	r.floor, r.bare, r.fenced = floorTook.Seconds(), bareTook.Seconds(), fencedTook.Seconds()
	return r, err
}

// warmUp uploads a report of 1,000 results into a project of its own and
// waits for it, then stores each floor of as many items.
func warmUp(ctx context.Context, h http.Handler, watch *store.Store, company int64, key string, floors ...floorKind) error {
	const n = 1000
	body, err := gzipSARIF(n)
	if err != nil {
		return err
	}
	scanID, _, err := upload(h, key, "bench-warm-up", n, body)
	if err != nil {
		return err
	}
	if err := waitComplete(ctx, watch, company, scanID, n); err != nil {
		return err
	}
	items, err := storedItems(ctx, watch, company, scanID)
	if err != nil {
		return err
	}
	for _, f := range floors {
		if _, err := f.store(ctx, items); err != nil {
			return err
		}
	}
	return nil
}

// waitComplete polls the scan until it is complete.
func waitComplete(ctx context.Context, watch *store.Store, company int64, scanID string, n int) error {
	for {
		sc, err := watch.Scans.GetScan(ctx, company, scanID)
		if err != nil {
			return err
		}
		if sc.Status == scans.ScanIncomplete {
			return fmt.Errorf("scan of %d results failed: %s %+v", n, sc.FailedReason, sc.ScanErrors)
		}
		if sc.Status == scans.ScanComplete {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// watchHeap samples the process's Go heap in use every 20 ms until the
// returned function is called, which returns the peak: an upper bound of
// what the upload and the worker held (both run in this process).
func watchHeap() func() uint64 {
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		var peak uint64
		var m runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-result }
}

func parseSizes(raw string) []int {
	var out []int
	for _, f := range bytes.Split([]byte(raw), []byte(",")) {
		if n, err := strconv.Atoi(string(bytes.TrimSpace(f))); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// gzipSARIF is the report of n findings (report's distribution) as a
// gzip-compressed SARIF log.
func gzipSARIF(n int) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	fmt.Fprint(zw, `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"bench-sast"}},"results":[`)
	for k, f := range report(n).Findings {
		if k > 0 {
			fmt.Fprint(zw, ",")
		}
		fmt.Fprintf(zw, `{"ruleId":%q,"level":"error","message":{"text":%q},"locations":[{"physicalLocation":{"artifactLocation":{"uri":%q},"region":{"startLine":%d}}}],"properties":{"tags":["security","external/cwe/cwe-%d"]}}`,
			f.RuleID, f.Message, f.Path, f.Line, f.CWE)
	}
	fmt.Fprint(zw, `]}]}`)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// upload sends the report as the real client does (one POST, or 1 MiB
// chunks with Upload-Offset/Upload-Length) to the uploads handler h and
// returns the scan id.
func upload(h http.Handler, key, project string, n int, body []byte) (string, int, error) {
	return uploadTo("http://bench"+routes.BasePath, inProcess(h), key, project, n, body)
}

// sender sends one request and returns the answer's status and body.
type sender func(*http.Request) (int, []byte, error)

// inProcess sends requests to h in this process, as a server would
// hand them over.
func inProcess(h http.Handler) sender {
	return func(out *http.Request) (int, []byte, error) {
		req := httptest.NewRequest(out.Method, out.URL.String(), out.Body)
		req.Header = out.Header
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.Bytes(), nil
	}
}

// uploadTo sends the report (chunked past chunkSize) to the API at base
// through send and returns the scan id and how many requests it took.
func uploadTo(base string, send sender, key, project string, n int, body []byte) (string, int, error) {
	url := base + "/scan-upload?engine=sarif&project=" + project + "&branch=main&run_id=" + uuid.NewString()
	chunks := 0
	var answer []byte
	for off := 0; off < len(body) || chunks == 0; off += chunkSize {
		end := min(off+chunkSize, len(body))
		req, err := http.NewRequest("POST", url, bytes.NewReader(body[off:end]))
		if err != nil {
			return "", chunks, err
		}
		req.Header.Set(auth.APIKeyHeader, key)
		req.Header.Set("Content-Type", "application/json")
		if len(body) > chunkSize {
			req.Header.Set("Upload-Offset", strconv.Itoa(off))
			req.Header.Set("Upload-Length", strconv.Itoa(len(body)))
		}
		code, got, err := send(req)
		chunks++
		if err != nil {
			return "", chunks, fmt.Errorf("upload of %d results: chunk %d: %w", n, chunks, err)
		}
		if code != http.StatusOK {
			return "", chunks, fmt.Errorf("upload of %d results: chunk %d: %d %s", n, chunks, code, got)
		}
		answer = got
	}
	var out struct {
		ScanID string `json:"sast_scan_id"`
	}
	if err := json.Unmarshal(answer, &out); err != nil || out.ScanID == "" {
		return "", chunks, fmt.Errorf("upload of %d results answered %s", n, answer)
	}
	return out.ScanID, chunks, nil
}

// indexKeys are the index key attributes an issue carries.
var indexKeys = map[string]bool{}

func init() {
	for _, ix := range []tabledef.Index{tabledef.GSI1, tabledef.GSI2, tabledef.Offset} {
		indexKeys[ix.PK], indexKeys[ix.SK] = true, true
	}
}

// floorKind is a table to store floor items in, whether it is made as
// the product's (stream on) with the items keeping the issue's index keys,
// how many writers send its batches, and whether it writes them in fenced
// transactions instead (one writer).
type floorKind struct {
	table   *store.Store
	product bool
	writers int
	fenced  bool
}

// storedItems are the items of the issues a scan stored, as the table
// holds them.
func storedItems(ctx context.Context, watch *store.Store, company int64, scanID string) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	err := watch.Lists.EachScanIssue(ctx, company, scanID, func(i findings.Issue) error {
		item, err := attributevalue.MarshalMap(i)
		items = append(items, item)
		return err
	})
	return items, err
}

// store writes the items again under keys of their own and returns how
// long it took: with BatchWriteItem, 25 per call on f.writers writers, or
// in fenced transactions (storeFenced).
func (f floorKind) store(ctx context.Context, items []map[string]types.AttributeValue) (time.Duration, error) {
	own := f.ownItems(items)
	if f.fenced {
		return f.storeFenced(ctx, own)
	}
	var reqs [][]types.WriteRequest
	for b := range slices.Chunk(own, 25) {
		batch := make([]types.WriteRequest, len(b))
		for n, item := range b {
			batch[n] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
		}
		reqs = append(reqs, batch)
	}
	st := f.table
	work := make(chan []types.WriteRequest)
	errs := make(chan error, f.writers)
	var wg sync.WaitGroup
	start := time.Now()
	for range f.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failed := false
			for b := range work { // drained to the end even after a failure
				pending := map[string][]types.WriteRequest{st.TableName(): b}
				for len(pending) > 0 && !failed {
					out, err := st.Client().BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
					if err != nil {
						errs <- err
						failed = true
						break
					}
					pending = out.UnprocessedItems
				}
			}
		}()
	}
	for _, b := range reqs {
		work <- b
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return took, nil
}

// ownItems are copies of items under keys of a run of their own (index
// keys kept on a product table, dropped on a bare one).
func (f floorKind) ownItems(items []map[string]types.AttributeValue) []map[string]types.AttributeValue {
	run := uuid.NewString()
	out := make([]map[string]types.AttributeValue, len(items))
	for k, stored := range items {
		item := maps.Clone(stored)
		for name, v := range item {
			// An empty index key is refused; without indexes, the floor is
			// the table's own write rate.
			sv, ok := v.(*types.AttributeValueMemberS)
			if ok && (sv.Value == "" || !f.product) && indexKeys[name] {
				delete(item, name)
			}
		}
		item["PK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("FLOOR#%s#%d", run, k%64)}
		item["SK"] = &types.AttributeValueMemberS{Value: fmt.Sprintf("ISSUE#%08d", k)}
		out[k] = item
	}
	return out
}

// storeFenced writes items in transactions of 99 puts and a condition
// check on one head item (as a lease's fence checks the branch's head),
// one after the other (DynamoDB Local runs one transaction at a time).
func (f floorKind) storeFenced(ctx context.Context, items []map[string]types.AttributeValue) (time.Duration, error) {
	table := aws.String(f.table.TableName())
	head := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "FLOOR#HEAD"}, "SK": &types.AttributeValueMemberS{Value: "HEAD"}}
	owner := map[string]types.AttributeValue{":o": &types.AttributeValueMemberS{Value: uuid.NewString()}}
	if _, err := f.table.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: table,
		Item: map[string]types.AttributeValue{"PK": head["PK"], "SK": head["SK"], "lease_owner": owner[":o"]}}); err != nil {
		return 0, err
	}
	start := time.Now()
	for b := range slices.Chunk(items, 99) {
		tx := make([]types.TransactWriteItem, 0, len(b)+1)
		for _, item := range b {
			tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: table, Item: item}})
		}
		tx = append(tx, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: table, Key: head,
			ConditionExpression: aws.String("lease_owner = :o"), ExpressionAttributeValues: owner}})
		if _, err := f.table.Client().TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx}); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// tenant creates a company with an admin and returns the company and the
// admin's API key.
func tenant(ctx context.Context, st *store.Store) (int64, string, error) {
	id, err := st.Ledger.NextID(ctx, "company")
	if err != nil {
		return 0, "", err
	}
	if err := bulkload.PutCompany(ctx, st, schema.Company{ID: id, Name: "Bench"}); err != nil {
		return 0, "", err
	}
	uid, err := st.Ledger.NextID(ctx, "user")
	if err != nil {
		return 0, "", err
	}
	if err := bulkload.PutUser(ctx, st, schema.User{ID: uid, CompanyID: id, Email: "bench@bench.test", FirstName: "Bench", LastName: "Runner",
		IsAdmin: true, Active: true}); err != nil {
		return 0, "", err
	}
	key := auth.NewAPIKey()
	return id, key, bulkload.PutAPIKey(ctx, st, id, uid, key)
}

// ingesterMemLimit is the ingester function's GOMEMLIMIT in bytes.
func ingesterMemLimit() int64 {
	for _, f := range deployspec.Workers() {
		if f.Group == deployspec.WorkerIngester {
			return int64(f.GoMemLimitMiB()) << 20
		}
	}
	panic("no ingester in deployspec.Workers")
}
