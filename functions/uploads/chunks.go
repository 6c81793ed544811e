package uploads

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reportstore"
)

// The chunked protocol of the real client (reports over 50 MiB, 1 MiB
// chunks): every chunk is POSTed to the same URL (same run_id) with
// Upload-Offset, the position of its first byte, and Upload-Length, the
// report's total size; a chunk answered 2xx carries Upload-Offset, the
// position after it. Offsets count the body after any Content-Encoding.
//
// No chunk state lives in a process (each chunk may reach another Lambda
// instance): each chunk is an object of the report bucket named by the
// company, the run, the total length and its offset, so listing the
// upload's prefix is its state. A chunk repeated at an offset already
// received replaces that chunk (harmless: the client resends the same
// bytes after a dropped connection); a chunk past the received bytes is
// 409 with the expected offset in Upload-Offset. The chunk that ends at
// Upload-Length assembles the report and takes the path of a whole upload
// (same checks, same answer); repeating it answers the same again. Chunks
// expire with the bucket's lifecycle rule (reportstore.ChunkDays).
const (
	headerOffset = "Upload-Offset"
	headerLength = "Upload-Length"
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
		return chunkInfo{}, false, httpapi.UploadError(http.StatusBadRequest, "Upload-Offset and Upload-Length must be sent together")
	}
	off, err1 := strconv.ParseInt(rawOff, 10, 64)
	length, err2 := strconv.ParseInt(rawLen, 10, 64)
	switch {
	case err1 != nil || off < 0:
		return chunkInfo{}, false, httpapi.UploadError(http.StatusBadRequest, "Upload-Offset must be a non-negative integer")
	case err2 != nil || length <= 0:
		return chunkInfo{}, false, httpapi.UploadError(http.StatusBadRequest, "Upload-Length must be a positive integer")
	case length > MaxReportBytes:
		return chunkInfo{}, false, httpapi.UploadError(http.StatusRequestEntityTooLarge, "The report exceeds the upload limit of %s", size(MaxReportBytes))
	case off >= length:
		return chunkInfo{}, false, httpapi.UploadError(http.StatusBadRequest, "Upload-Offset must be less than Upload-Length")
	}
	return chunkInfo{offset: off, length: length}, true, nil
}

// chunk stores one chunk and, when it is the last, accepts the report.
func (h handlers) chunk(w http.ResponseWriter, r *http.Request, company int64, p scanParams, c chunkInfo, body []byte) error {
	end := c.offset + int64(len(body))
	switch {
	case len(body) == 0:
		return httpapi.UploadError(http.StatusBadRequest, "A chunk must not be empty")
	case end > c.length:
		return httpapi.UploadError(http.StatusBadRequest, "The chunk ends at byte %d, past Upload-Length %d", end, c.length)
	case c.offset == 0 && ingest.IsGzip(body) && c.length > ingest.MaxCompressedBytes:
		return httpapi.UploadError(http.StatusRequestEntityTooLarge, "The compressed report exceeds the upload limit of %s", size(ingest.MaxCompressedBytes))
	}
	if c.offset == 0 && end == c.length { // the whole report in one chunk
		w.Header().Set(headerOffset, strconv.FormatInt(end, 10))
		return h.accept(w, r, company, p, body)
	}
	ctx := r.Context()
	prefix := reportstore.ChunkPrefix(company, p.runID, c.length)
	have, err := h.reports.List(ctx, prefix)
	if err != nil {
		return err
	}
	next, sizes := received(prefix, have)
	if sz, ok := sizes[c.offset]; ok && sz != int64(len(body)) {
		w.Header().Set(headerOffset, strconv.FormatInt(next, 10))
		return httpapi.UploadError(http.StatusConflict, "A chunk of %d bytes was already received at offset %d; resume at offset %d", sz, c.offset, next)
	}
	if _, ok := sizes[c.offset]; !ok && c.offset != next {
		w.Header().Set(headerOffset, strconv.FormatInt(next, 10))
		return httpapi.UploadError(http.StatusConflict, "Expected the chunk at offset %d", next)
	}
	if err := h.reports.Put(ctx, reportstore.ChunkKey(company, p.runID, c.length, c.offset), body); err != nil {
		return err
	}
	if end < c.length {
		w.Header().Set(headerOffset, strconv.FormatInt(end, 10))
		return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "upload_offset": end, "upload_length": c.length})
	}
	report, next, err := h.assemble(ctx, company, p.runID, c.length)
	if err != nil {
		return err
	}
	if report == nil {
		w.Header().Set(headerOffset, strconv.FormatInt(next, 10))
		return httpapi.UploadError(http.StatusConflict, "The upload is missing bytes from offset %d", next)
	}
	w.Header().Set(headerOffset, strconv.FormatInt(c.length, 10))
	return h.accept(w, r, company, p, report)
}

// received reads an upload's state from its chunk objects: the end of the
// bytes received contiguously from 0, and each chunk's size by offset.
func received(prefix string, objs []reportstore.Object) (next int64, sizes map[int64]int64) {
	sizes = map[int64]int64{}
	for _, o := range objs {
		off, err := strconv.ParseInt(strings.TrimPrefix(o.Key, prefix), 10, 64)
		if err == nil {
			sizes[off] = o.Size
		}
	}
	for {
		sz, ok := sizes[next]
		if !ok || sz <= 0 {
			return next, sizes
		}
		next += sz
	}
}

// assemble reads the chunks of a complete upload in order into the report;
// nil and the first missing offset when they do not cover it exactly.
func (h handlers) assemble(ctx context.Context, company int64, run string, length int64) ([]byte, int64, error) {
	prefix := reportstore.ChunkPrefix(company, run, length)
	objs, err := h.reports.List(ctx, prefix)
	if err != nil {
		return nil, 0, err
	}
	next, sizes := received(prefix, objs)
	if next != length {
		return nil, min(next, length), nil
	}
	var buf bytes.Buffer
	buf.Grow(int(length))
	for off := int64(0); off < length; off += sizes[off] {
		b, err := h.reports.Get(ctx, reportstore.ChunkKey(company, run, length, off), sizes[off])
		if err != nil {
			return nil, 0, err
		}
		buf.Write(b)
	}
	if int64(buf.Len()) != length {
		return nil, 0, nil
	}
	return buf.Bytes(), length, nil
}
