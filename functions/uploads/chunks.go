package uploads

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
)

// The chunked protocol of the real client (reports over 50 MiB, 1 MiB
// chunks): every chunk is POSTed to the same URL (same run_id) with
// Upload-Offset, the position of its first byte, and Upload-Length, the
// report's total size; a chunk answered 2xx carries Upload-Offset, the
// position after it. Offsets count the body after any Content-Encoding.
//
// A run is a state machine kept in the table (store.UploadRun), since each
// chunk may reach another Lambda instance:
//   - no run: only a chunk at offset 0 starts one, reserving the report's
//     length (at least minReservation) of the company's quota of pending
//     upload bytes in the same transaction; past the quota, 413;
//   - receiving: the chunk at the run's offset is taken by a write
//     conditional on that offset, so of concurrent chunks at one offset
//     one is answered 2xx and the others 409 with the offset now reached;
//     a chunk already received (same offset, same bytes: a retry after a
//     lost answer) is answered as before, another one at an offset
//     received is 409;
//   - complete: the chunk that ends at Upload-Length releases the
//     reservation, and the report assembled from the chunks takes the
//     path of a whole upload (same checks, same answer). Sending that
//     chunk again answers the same again; any other chunk of a run that
//     has its scan is 409 naming the scan.
//
// A run and its chunks expire reportstore.ChunkDays after its first chunk
// (the bucket's lifecycle rule; the table's TTL); an expired run is gone,
// and its reservation no longer counts. A chunk's object is written only
// once the run took it, so a refused chunk stores nothing; the final chunk
// is never stored (it is in hand whenever the report is assembled).
const (
	headerOffset = "Upload-Offset"
	headerLength = "Upload-Length"
)

// Bounds of a chunked run. A run's state lists its chunks, so their number
// is bounded (the real client sends at most 64 chunks of 1 MiB); each
// pending run holds at least minReservation of the quota, so a company has
// at most quota/minReservation of them at once.
const (
	MaxChunks      = 1024
	minReservation = 1 << 20
)

// chunkInfo is a chunk's place in its upload.
type chunkInfo struct{ offset, length int64 }

// parseChunk reads Upload-Offset and Upload-Length: both or neither.
func parseChunk(r *http.Request) (chunkInfo, bool, error) {
	rawOff, rawLen := strings.TrimSpace(r.Header.Get(headerOffset)), strings.TrimSpace(r.Header.Get(headerLength))
	if rawOff == "" && rawLen == "" {
		return chunkInfo{}, false, nil
	}
	if rawOff == "" || rawLen == "" {
		return chunkInfo{}, false, httpapi.UploadError(httpapi.KindInvalid, "Upload-Offset and Upload-Length must be sent together")
	}
	off, err1 := strconv.ParseInt(rawOff, 10, 64)
	length, err2 := strconv.ParseInt(rawLen, 10, 64)
	switch {
	case err1 != nil || off < 0:
		return chunkInfo{}, false, httpapi.UploadError(httpapi.KindInvalid, "Upload-Offset must be a non-negative integer")
	case err2 != nil || length <= 0:
		return chunkInfo{}, false, httpapi.UploadError(httpapi.KindInvalid, "Upload-Length must be a positive integer")
	case length > MaxReportBytes:
		return chunkInfo{}, false, httpapi.UploadError(httpapi.KindTooLarge, "The report exceeds the upload limit of %s", size(MaxReportBytes))
	case off >= length:
		return chunkInfo{}, false, httpapi.UploadError(httpapi.KindInvalid, "Upload-Offset must be less than Upload-Length")
	}
	return chunkInfo{offset: off, length: length}, true, nil
}

// chunk takes one chunk of a run and, when it is the last, accepts the
// report.
func (h handlers) chunk(w http.ResponseWriter, r *http.Request, company int64, p scanParams, c chunkInfo, body []byte) error {
	end := c.offset + int64(len(body))
	switch {
	case len(body) == 0:
		return httpapi.UploadError(httpapi.KindInvalid, "A chunk must not be empty")
	case end > c.length:
		return httpapi.UploadError(httpapi.KindInvalid, "The chunk ends at byte %d, past Upload-Length %d", end, c.length)
	case c.offset == 0 && ingest.IsGzip(body) && c.length > ingest.MaxCompressedBytes:
		return httpapi.UploadError(httpapi.KindTooLarge, "The compressed report exceeds the upload limit of %s", size(ingest.MaxCompressedBytes))
	}
	if c.offset == 0 && end == c.length { // the whole report in one chunk
		w.Header().Set(headerOffset, strconv.FormatInt(end, 10))
		return h.accept(w, r, company, p, body)
	}
	ch := chunkOf(body)
	// A write refused because another chunk came first is decided again
	// on the state that chunk left (a resend of it, or a 409); a second
	// refusal is the generic conflict.
	err := h.chunkStep(w, r, company, p, c, ch, body)
	if errors.Is(err, ddb.ErrConflict) {
		err = h.chunkStep(w, r, company, p, c, ch, body)
	}
	return err
}

// chunkOf is a chunk's record: its size and a digest of its bytes (128
// bits of SHA-256 tell a resend from another chunk).
func chunkOf(body []byte) scans.UploadChunk {
	sum := sha256.Sum256(body)
	return scans.UploadChunk{Size: int64(len(body)), Digest: hex.EncodeToString(sum[:16])}
}

// chunkStep decides on a chunk against the run's state as read now.
func (h handlers) chunkStep(w http.ResponseWriter, r *http.Request, company int64, p scanParams, c chunkInfo, ch scans.UploadChunk, body []byte) error {
	ctx, now := r.Context(), h.now()
	end := c.offset + ch.Size
	run, err := h.store.Scans.GetUploadRun(ctx, company, p.runID, now)
	missing := errors.Is(err, ddb.ErrNotFound)
	if err != nil && !missing {
		return err
	}
	resent := false
	if !missing && run.Length == c.length {
		got, ok := run.ChunkAt(c.offset)
		resent = ok && got == ch
	}
	if resent && end == c.length {
		// The final chunk again: the report is assembled and accepted
		// again, which answers what the first time did.
		return h.complete(w, r, company, p, run, body)
	}
	switch sc, err := h.store.Scans.ScanByRunID(ctx, company, p.runID); {
	case err == nil:
		return httpapi.UploadError(httpapi.KindConflict, "run_id %s already has its scan %s; a new report needs a new run_id", p.runID, sc.ID)
	case !errors.Is(err, ddb.ErrNotFound):
		return err
	}
	if resent {
		if err := h.putChunk(ctx, company, p.runID, c, body); err != nil {
			return err
		}
		return chunkTaken(w, end, c.length)
	}
	if missing {
		return h.start(w, r, company, p, c, ch, body)
	}
	expected := func(format string, args ...any) error {
		w.Header().Set(headerOffset, strconv.FormatInt(run.Offset, 10))
		return httpapi.UploadError(httpapi.KindConflict, format, args...)
	}
	switch {
	case run.Length != c.length:
		return expected("run_id %s is an upload of %d bytes (Upload-Length); resume at offset %d", p.runID, run.Length, run.Offset)
	case run.Complete():
		return expected("All %d bytes of run_id %s were received; only its final chunk may be sent again", run.Length, p.runID)
	case c.offset < run.Offset:
		return expected("Other bytes were already received at offset %d; resume at offset %d", c.offset, run.Offset)
	case c.offset > run.Offset:
		return expected("Expected the chunk at offset %d", run.Offset)
	}
	if err := tooManyChunks(len(run.Chunks), c, ch.Size); err != nil {
		return err
	}
	if run, err = h.store.Scans.AppendUploadChunk(ctx, company, run, ch, now); err != nil {
		return err
	}
	if !run.Complete() {
		if err := h.putChunk(ctx, company, p.runID, c, body); err != nil {
			return err
		}
		return chunkTaken(w, end, c.length)
	}
	return h.complete(w, r, company, p, run, body)
}

// start begins a run with its first chunk, reserving its quota.
func (h handlers) start(w http.ResponseWriter, r *http.Request, company int64, p scanParams, c chunkInfo, ch scans.UploadChunk, body []byte) error {
	if c.offset != 0 {
		w.Header().Set(headerOffset, "0")
		return httpapi.UploadError(httpapi.KindConflict, "Expected the chunk at offset 0")
	}
	if err := tooManyChunks(0, c, ch.Size); err != nil {
		return err
	}
	now := h.now()
	run := scans.UploadRun{
		RunID: p.runID, Length: c.length, Offset: ch.Size, Chunks: []string{ch.String()},
		Reserved: max(c.length, minReservation), ExpiresAt: now.Add(reportstore.ChunkDays * 24 * time.Hour).Unix(),
	}
	err := h.store.Scans.StartUploadRun(r.Context(), company, run, h.opts.PendingQuota, now)
	var q *scans.QuotaError
	if errors.As(err, &q) {
		return httpapi.UploadError(httpapi.KindTooLarge,
			"Unfinished chunked uploads of the company hold %s of its %s quota, and this one needs %s: retry when some complete (or expire, %d day after their first chunk)",
			size(q.Pending), size(q.Quota), size(q.Need), reportstore.ChunkDays)
	}
	if err != nil {
		return err
	}
	if err := h.putChunk(r.Context(), company, p.runID, c, body); err != nil {
		return err
	}
	return chunkTaken(w, ch.Size, c.length)
}

// tooManyChunks refuses a chunk after which the rest of the report, in
// chunks of its size, would make more than MaxChunks.
func tooManyChunks(before int, c chunkInfo, n int64) error {
	rest := c.length - c.offset - n
	if int64(before)+1+(rest+n-1)/n <= MaxChunks {
		return nil
	}
	return httpapi.UploadError(httpapi.KindInvalid, "A report comes in at most %d chunks: send chunks of at least %d bytes",
		MaxChunks, (c.length+MaxChunks-1)/MaxChunks)
}

func (h handlers) putChunk(ctx context.Context, company int64, run string, c chunkInfo, body []byte) error {
	return h.reports.Put(ctx, reportstore.ChunkKey(company, run, c.length, c.offset), body)
}

func chunkTaken(w http.ResponseWriter, end, length int64) error {
	w.Header().Set(headerOffset, strconv.FormatInt(end, 10))
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "upload_offset": end, "upload_length": length})
}

// complete assembles a complete run's report (its final chunk is the one
// in hand: sent again, it comes again, so it is never stored) and accepts
// it.
func (h handlers) complete(w http.ResponseWriter, r *http.Request, company int64, p scanParams, run scans.UploadRun, last []byte) error {
	report, missing, err := h.assemble(r.Context(), company, run, last)
	if err != nil {
		return err
	}
	if missing >= 0 {
		// Its writer failed after the run took it: the client sends it
		// again (a resend, which stores it).
		w.Header().Set(headerOffset, strconv.FormatInt(missing, 10))
		return httpapi.UploadError(httpapi.KindConflict, "The chunk at offset %d of run_id %s is missing; send it again", missing, p.runID)
	}
	w.Header().Set(headerOffset, strconv.FormatInt(run.Length, 10))
	return h.accept(w, r, company, p, report)
}

// assemble reads the chunks of a complete run before the last in order,
// and appends last; when one is missing or not the chunk recorded (an
// object left by an expired run of the same id), its offset (else -1).
func (h handlers) assemble(ctx context.Context, company int64, run scans.UploadRun, last []byte) ([]byte, int64, error) {
	parts := run.Parts()
	var buf bytes.Buffer
	buf.Grow(int(run.Length))
	for _, part := range parts[:len(parts)-1] {
		b, err := h.reports.Get(ctx, reportstore.ChunkKey(company, run.RunID, run.Length, part.Offset), part.Size)
		if errors.Is(err, reportstore.ErrNotFound) || errors.Is(err, reportstore.ErrTooLarge) || (err == nil && chunkOf(b) != part.UploadChunk) {
			return nil, part.Offset, nil
		}
		if err != nil {
			return nil, 0, err
		}
		buf.Write(b)
	}
	buf.Write(last)
	return buf.Bytes(), -1, nil
}
