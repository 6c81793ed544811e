package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
)

// Limits of one uploaded report, GitHub code scanning's: at most 25,000
// results (the format readers also hold each SARIF run to 25,000 results
// and a file to 20 runs), at most 10 MiB as uploaded when gzip-compressed,
// and at most MaxReportBytes once decompressed (a gzip bomb stops there,
// while it is read).
const (
	MaxFindings        = 25_000
	MaxCompressedBytes = 10 << 20
	MaxReportBytes     = 64 << 20
)

// Errors of Decode.
var (
	ErrBadGzip  = errors.New("the report is not valid gzip")
	ErrTooLarge = errors.New("the decompressed report exceeds the limit")
)

// IsGzip reports whether data starts with the gzip magic number: a report
// stored compressed (a chunked upload of a .gz file, or a whole one sent
// without Content-Encoding).
func IsGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

// Decode returns the report in data: decompressed (at most MaxReportBytes,
// counted while reading) when data is gzip, else data itself.
func Decode(data []byte) ([]byte, error) {
	if !IsGzip(data) {
		if len(data) > MaxReportBytes {
			return nil, ErrTooLarge
		}
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, ErrBadGzip
	}
	out, err := io.ReadAll(io.LimitReader(zr, MaxReportBytes+1))
	if err != nil {
		return nil, ErrBadGzip
	}
	if len(out) > MaxReportBytes {
		return nil, ErrTooLarge
	}
	return out, nil
}
