package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/jsonerr"
	"github.com/acme/codescan-api/shared/routes"
)

// MaxBodyBytes bounds every request body (Lambda's synchronous payload limit
// is 6 MB; uploads set their own lower limit).
const MaxBodyBytes = routes.DefaultMaxBodyBytes

// WriteJSON encodes v into a buffer first, so an encoding failure never
// produces half a response, then writes headers, status and body.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// DecodeJSONObject reads a JSON object body into a map of raw members, so
// handlers can tell an absent member from an explicit null. Anything but one
// JSON object is ErrInvalidJSON; an oversized body is 413.
func DecodeJSONObject(r *http.Request) (map[string]json.RawMessage, error) {
	body, err := ReadBody(r, MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	if err := checkUTF8(body); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, ErrInvalidJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ErrInvalidJSON // trailing data after the object
	}
	return obj, nil
}

// DecodeJSON strictly decodes a JSON object body into v: unknown members and
// wrong types are 400 with a message naming them.
func DecodeJSON(r *http.Request, v any) error {
	body, err := ReadBody(r, MaxBodyBytes)
	if err != nil {
		return err
	}
	if err := checkUTF8(body); err != nil {
		return err
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return ErrInvalidJSON
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Errorf(http.StatusBadRequest, "Field %q must be of type %s", jsonerr.MemberPath(te.Field), jsonType(te.Type.Kind().String()))
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return Errorf(http.StatusBadRequest, "Unknown field %s", name)
		}
		return ErrInvalidJSON
	}
	return nil
}

func jsonType(kind string) string {
	switch kind {
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "bool":
		return "boolean"
	case "string":
		return "string"
	case "ptr":
		return "the documented type"
	}
	return "number"
}

// written as [] rather than null.
func Array[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
