package vex

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// The published schemas (schemas/README.md says where from), each
// registered under its own $id so that no reference leaves the binary.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

const (
	cycloneDXBase = "http://cyclonedx.org/schema/"
	openVEXID     = "https://github.com/openvex/spec/openvex_json_schema_0.2.0.json"
)

// cycloneDXVersions are the CycloneDX versions read, by specVersion.
var cycloneDXVersions = []string{"1.4", "1.5", "1.6"}

var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema // by FormatOpenVEX or "cyclonedx-1.6"
	schemasErr  error
)

// compiled returns the compiled schemas, compiling them on first use.
func compiled() (map[string]*jsonschema.Schema, error) {
	schemasOnce.Do(func() { schemas, schemasErr = compile() })
	return schemas, schemasErr
}

func compile() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	add := func(url, file string) error {
		data, err := schemaFiles.ReadFile("schemas/" + file)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		return c.AddResource(url, doc)
	}
	files := map[string]string{cycloneDXBase + "spdx.schema.json": "spdx.schema.json",
		cycloneDXBase + "jsf-0.82.schema.json": "jsf-0.82.schema.json", openVEXID: "openvex_json_schema.json"}
	for _, v := range cycloneDXVersions {
		files[cycloneDXBase+"bom-"+v+".schema.json"] = "bom-" + v + ".schema.json"
	}
	for url, file := range files {
		if err := add(url, file); err != nil {
			return nil, err
		}
	}
	out := map[string]*jsonschema.Schema{}
	var err error
	if out[FormatOpenVEX], err = c.Compile(openVEXID); err != nil {
		return nil, err
	}
	for _, v := range cycloneDXVersions {
		if out[FormatCycloneDX+"-"+v], err = c.Compile(cycloneDXBase + "bom-" + v + ".schema.json"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// validate checks data against the schema named, answering an *Error
// that names the JSON pointer of the first failure.
func validate(name string, data []byte) error {
	all, err := compiled()
	if err != nil {
		return fmt.Errorf("VEX schemas: %w", err) // embedded data: a build error
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return errorf("", "the document is not valid JSON")
	}
	err = all[name].Validate(inst)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return schemaError(ve)
	}
	return err
}

// schemaError is the first failure of a validation: of its leaf failures
// (following every cause down: allOf's failing branch rather than allOf),
// the one at the first instance location in pointer order (array indices
// as numbers), then by message, so the same document always names the
// same member; answered by its JSON pointer and message.
func schemaError(ve *jsonschema.ValidationError) *Error {
	var first *leafError
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		l := &leafError{at: e.InstanceLocation, msg: strings.TrimSpace(e.ErrorKind.LocalizedString(english))}
		if first == nil || l.before(first) {
			first = l
		}
	}
	walk(ve)
	parts := make([]string, len(first.at))
	for n, p := range first.at {
		parts[n] = pointerEscaper.Replace(p)
	}
	pointer := "/" + strings.Join(parts, "/")
	return &Error{Field: visible(clip(pointer, 300)), Problem: "fails the schema: " + visible(clip(first.msg, 300))}
}

// leafError is one leaf failure of a validation.
type leafError struct {
	at  []string
	msg string
}

// before orders failures by instance location (segment by segment,
// numbers as numbers, a prefix first), then by message.
func (l *leafError) before(o *leafError) bool {
	for n := 0; n < len(l.at) && n < len(o.at); n++ {
		if c := compareSegment(l.at[n], o.at[n]); c != 0 {
			return c < 0
		}
	}
	if len(l.at) != len(o.at) {
		return len(l.at) < len(o.at)
	}
	return l.msg < o.msg
}

func compareSegment(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// pointerEscaper escapes a JSON pointer's reference token (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

var english = message.NewPrinter(language.English)
