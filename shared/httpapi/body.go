package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// errBodyTooLarge is what a body reader reports past the route's limit.
var errBodyTooLarge = errors.New("request body exceeds the route's limit")

// limitedBody fails with errBodyTooLarge once more than n bytes were read,
// so a limit is found out while reading, not after.
type limitedBody struct {
	r io.Reader
	n int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errBodyTooLarge
	}
	return n, err
}

// decodeBody applies the request's Content-Encoding: gzip is decoded (the
// encoded size held to limit and the decoded one to decoded while
// reading), none or identity is read as is, anything else (several codings
// included) is 415.
func decodeBody(r *http.Request, limit, decoded int64) error {
	codings := r.Header.Values("Content-Encoding")
	coding := strings.ToLower(strings.TrimSpace(strings.Join(codings, ",")))
	raw := &limitedBody{r: r.Body, n: limit}
	switch coding {
	case "", "identity":
		r.Body = readCloser{raw, r.Body}
		return nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(raw)
		if errors.Is(err, errBodyTooLarge) {
			return Of(KindTooLarge)
		}
		if err != nil {
			return OfKind(KindInvalid, "The request body is not valid gzip")
		}
		r.Body = readCloser{&limitedBody{r: gzipErrors{zr}, n: decoded}, r.Body}
		r.Header.Del("Content-Encoding")
		r.Header.Del("Content-Length")
		r.ContentLength = -1
		return nil
	}
	return Of(KindUnsupportedMedia)
}

// errBadGzip: a gzip body that breaks off or is corrupt.
var errBadGzip = errors.New("invalid gzip body")

type gzipErrors struct{ r io.Reader }

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF && !errors.Is(err, errBodyTooLarge) {
		err = errBadGzip
	}
	return n, err
}

type readCloser struct {
	io.Reader
	io.Closer
}

// ReadBody reads the whole body, decoded (see decodeBody), answering 413
// past limit bytes. Uploads and JSON bodies all read through it.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	switch {
	case errors.Is(err, errBodyTooLarge), err == nil && int64(len(b)) > limit:
		return nil, OfKind(KindTooLarge, "Request body exceeds %d bytes", limit)
	case errors.Is(err, errBadGzip):
		return nil, OfKind(KindInvalid, "The request body is not valid gzip")
	case err != nil:
		return nil, OfKind(KindInvalid, "Could not read request body")
	}
	return b, nil
}

var errNotUTF8 = OfKind(KindInvalid, "The JSON body is not valid UTF-8")

// checkUTF8 refuses a JSON body with invalid UTF-8 or an unpaired
// surrogate escape (\ud800): the decoder would turn either silently into
// U+FFFD.
func checkUTF8(body []byte) error {
	if !utf8.Valid(body) {
		return errNotUTF8
	}
	for i := 0; i < len(body)-1; i++ {
		if body[i] != '\\' {
			continue
		}
		if body[i+1] == 'u' && i+6 <= len(body) {
			if c, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16); err == nil && c >= 0xd800 && c <= 0xdfff {
				low := i+12 <= len(body) && body[i+6] == '\\' && body[i+7] == 'u'
				if low {
					d, err := strconv.ParseUint(string(body[i+8:i+12]), 16, 16)
					low = err == nil && d >= 0xdc00 && d <= 0xdfff
				}
				if c >= 0xdc00 || !low {
					return errNotUTF8
				}
				i += 6 // the low half was checked with its high half
			}
		}
		i++ // the escaped character
	}
	return nil
}

// Limits of JSON the API stores without interpreting it (CI metadata).
const (
	MaxOpaqueDepth = 32
	MaxOpaqueKeys  = 10_000
)

// CheckOpaqueJSON checks a JSON document that is stored as is: one value,
// valid UTF-8, nesting at most MaxOpaqueDepth, at most MaxOpaqueKeys object
// members in all. The message of an error is meant for the client.
func CheckOpaqueJSON(body []byte) error {
	if err := checkUTF8(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // a number past float64's range (1e700) is valid JSON
	depth, keys, values := 0, 0, 0
	inObject := []bool{}
	expectKey := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			// Token reports EOF inside an unclosed value too.
			if depth != 0 || values != 1 {
				return ErrInvalidJSON
			}
			break
		}
		if err != nil {
			return ErrInvalidJSON
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				depth++
				if depth > MaxOpaqueDepth {
					return OfKind(KindInvalid, "JSON nests deeper than %d levels", MaxOpaqueDepth)
				}
				inObject = append(inObject, t == '{')
				expectKey = t == '{'
				continue
			default:
				depth--
				inObject = inObject[:len(inObject)-1]
			}
		case string:
			if expectKey {
				keys++
				if keys > MaxOpaqueKeys {
					return OfKind(KindInvalid, "JSON holds more than %d object members", MaxOpaqueKeys)
				}
				expectKey = false
				continue
			}
		}
		expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
		if depth == 0 {
			values++
		}
	}
	return nil
}
