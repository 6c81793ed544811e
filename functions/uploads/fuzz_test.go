package uploads

// Fuzz targets of the run metadata parsers: the Git configuration (body
// reader and remote), the CI data body (the opaque JSON check and the
// masking). Seeds: f.Add below and testdata/fuzz/<Target>/ (real
// .git/config files written by git 2.39, request bodies captured from curl,
// CI environments of GitHub Actions, GitLab CI and Jenkins).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/repourl"
)

// FuzzRemoteOf: any configuration gives an error and no remote, or a
// remote whose URL is canonical and carries no credentials.
func FuzzRemoteOf(f *testing.F) {
	for _, s := range []string{
		"[remote \"upstream\"]\n\turl = git@github.com:other/x.git\n[remote \"origin\"]\n\turl = git@github.com:acme/x.git\n",
		"[remote \"origin\"]\n\turl = https://u:p@code.example/a/b.git/\n\turl = https://mirror.example/a/b\n",
		"# comment\n[include]\n\tpath = ~/.gitconfig-extra\n[remote \"origin\"] ; trailing\n url = \"git://git.example.org/proj.git\"\n",
		"[remote \"origin\"\n url = x",
		"[remote \"origin\"]\n\turl = ../local\n[remote \"b\"]\n\turl = https://h.example/a/b\n",
		"[remote.origin]\n\turl = https://old-style.example/a/b\n",
		"[remote \"origin\"]\n\turl = https://h.example/a/b \\\n\t\tcontinued\n",
		"[remote \"origin\"]\n\turl = \"https://x-access-token:ghs_secret@GitHub.com/Acme/API.git?x=1#f\"\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rem, err := remoteOf(text)
		if err != nil {
			if rem != (Remote{}) {
				t.Fatalf("error %v with a remote %+v", err, rem)
			}
			return
		}
		if err := canonicalRepoURL(rem.URL); err != nil {
			t.Fatalf("remote %+v: %v", rem, err)
		}
	})
}

// canonicalRepoURL checks what repourl.Normalize promises of its output:
// https, no user information, query or fragment, a lower-case host, a path,
// and a fixed point of Normalize.
func canonicalRepoURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "https" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return fmt.Errorf("%q is not a plain https URL", s)
	case u.Host == "" || u.Host != strings.ToLower(u.Host) || strings.ContainsAny(s, " \t\r\n\\"):
		return fmt.Errorf("%q: host %q", s, u.Host)
	case strings.Trim(u.Path, "/") == "" || strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".git"):
		return fmt.Errorf("%q: path %q", s, u.Path)
	}
	if again, err := repourl.Normalize(s); err != nil || again != s {
		return fmt.Errorf("Normalize(%q) = %q, %v: not a fixed point", s, again, err)
	}
	return nil
}

// FuzzGitConfigText: any body, with any Content-Type, gives the upload
// routes' 400 or 413, or non-blank UTF-8 text within the limit: the body
// itself, or the content of its part named "file". A body accepted as
// text is accepted alike as the file part of a multipart body.
func FuzzGitConfigText(f *testing.F) {
	f.Add("text/plain", []byte("[remote \"origin\"]\n\turl = https://github.com/acme/x\n"))
	f.Add("multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"config\"\r\n\r\n[core]\n--b--\r\n"))
	f.Add("multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--b--\r\n"))
	f.Add("multipart/form-data", []byte("--b\r\n"))
	f.Add("multipart/form-data; boundary=\"a b\"", []byte("--a b\r\nContent-Disposition: form-data; name=file\r\n\r\n\xff\r\n--a b--"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		text, err := readGitConfig(contentType, body)
		if err != nil {
			var e *httpapi.Error
			if !errors.As(err, &e) || (e.Status != http.StatusBadRequest && e.Status != http.StatusRequestEntityTooLarge) || e.Message == "" {
				t.Fatalf("error %#v is not the upload routes' 400 or 413", err)
			}
			return
		}
		if !utf8.ValidString(text) || strings.TrimSpace(text) == "" || len(text) > MaxGitConfigBytes {
			t.Fatalf("accepted %d bytes, UTF-8 %v: %q", len(text), utf8.ValidString(text), truncated(text))
		}
		mediaType, _, _ := mime.ParseMediaType(contentType)
		if mediaType != "multipart/form-data" {
			if text != string(body) {
				t.Fatalf("text %q is not the body %q", truncated(text), truncated(string(body)))
			}
			// The same text as the file part of a multipart body.
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, err := mw.CreateFormFile("file", "config")
			if err != nil {
				t.Fatal(err)
			}
			fw.Write(body)
			mw.Close()
			got, err := readGitConfig(mw.FormDataContentType(), buf.Bytes())
			if err != nil || got != text {
				t.Fatalf("as a file part: %q, %v; as text: %q", truncated(got), err, truncated(text))
			}
		}
	})
}

func readGitConfig(contentType string, body []byte) (string, error) {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/git-config-upload", bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	return gitConfigText(r)
}

func truncated(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// FuzzMaskCIData: the CI data body goes through the handler's two steps
// (CheckOpaqueJSON, then maskCIData). A body refused is refused with a
// 400; a body accepted comes out as one valid JSON object of the same
// shape, every secret name's value and every credential-shaped string
// masked, everything else kept (numbers with their text). Into every
// accepted body, secrets are planted (under secret names, and as
// credential-shaped values under harmless names, at every depth): none of
// them may come out.
func FuzzMaskCIData(f *testing.F) {
	for _, s := range []string{
		`{"GITHUB_TOKEN":"ghs_16C7e42F292c6912E7710c838347Ae178B4a","GITHUB_SHA":"4c0f1e5b","ATTEMPT":2}`,
		`{"nested":{"clientSecret":{"a":1},"steps":["ok","AKIAIOSFODNN7EXAMPLE"]},"n":1.50,"big":1e400}`,
		`{"CLONE_URL":"https://x-access-token:abc123@github.com/acme/web-app.git","u":"https://github.com/acme"}`,
		`{"a":"\u00e9\ud83d\ude00","b":"<&>","c":null,"d":true,"e":[[],{}]}`,
		`{"a":1}{"b":2}`, `[{"a":"b"}]`, `"x"`, `null`, ``, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
		`{"a":` + strings.Repeat(`[`, 33) + strings.Repeat(`]`, 33) + `}`,
		`{"GITHUB_TOKEN":"a","GITHUB_TOKEN":"b","github_token":{"x":"y"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if err := httpapi.CheckOpaqueJSON(body); err != nil {
			var e *httpapi.Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest {
				t.Fatalf("CheckOpaqueJSON: %#v is not a 400", err)
			}
			return
		}
		out, err := maskCIData(body)
		if err != nil {
			if !errors.Is(err, errNotObject) {
				t.Fatalf("maskCIData: untyped error %v", err)
			}
			if isOneObject(body) {
				t.Fatalf("one JSON object refused: %q", truncated(string(body)))
			}
			return
		}
		in, ok := decodeOne(body)
		if !ok {
			t.Fatalf("accepted %q, which is not one JSON value", truncated(string(body)))
		}
		got, ok := decodeOne(out)
		if !ok {
			t.Fatalf("output is not one JSON value: %q", truncated(string(out)))
		}
		if _, isObject := got.(map[string]any); !isObject {
			t.Fatalf("output is not an object: %q", truncated(string(out)))
		}
		if err := maskedOf(in, got, "$"); err != nil {
			t.Fatalf("%v\nin:  %s\nout: %s", err, truncated(string(body)), truncated(string(out)))
		}

		planted, seeds := plant(in.(map[string]any), body)
		out, err = maskCIData(planted)
		if err != nil {
			t.Fatalf("planted body refused: %v", err)
		}
		for _, s := range seeds {
			if bytes.Contains(out, []byte(s)) {
				t.Fatalf("planted secret %q kept: %s", s, truncated(string(out)))
			}
		}
	})
}

// decodeOne decodes exactly one JSON value (numbers as json.Number).
func decodeOne(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

func isOneObject(b []byte) bool {
	v, ok := decodeOne(b)
	_, obj := v.(map[string]any)
	return ok && obj
}

// maskedOf checks that out is in with secrets masked (see the target).
func maskedOf(in, out any, at string) error {
	switch in := in.(type) {
	case map[string]any:
		o, ok := out.(map[string]any)
		if !ok || len(o) != len(in) {
			return fmt.Errorf("%s: object %v became %v", at, in, out)
		}
		for k, v := range in {
			ov, ok := o[k]
			switch {
			case !ok:
				return fmt.Errorf("%s: member %q dropped", at, k)
			case secretName(k):
				if ov != masked {
					return fmt.Errorf("%s.%s: secret name kept its value %v", at, k, ov)
				}
			default:
				if err := maskedOf(v, ov, at+"."+k); err != nil {
					return err
				}
			}
		}
	case []any:
		o, ok := out.([]any)
		if !ok || len(o) != len(in) {
			return fmt.Errorf("%s: array %v became %v", at, in, out)
		}
		for i := range in {
			if err := maskedOf(in[i], o[i], fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case string:
		want := in
		if secretValue(in) {
			want = masked
		}
		if out != want {
			return fmt.Errorf("%s: string %q became %v, want %q", at, in, out, want)
		}
	default: // json.Number, bool, nil: kept as they were
		if out != in {
			return fmt.Errorf("%s: %v became %v", at, in, out)
		}
	}
	return nil
}

// plant returns obj re-encoded with secrets added at every level (each
// object gets them under secret names and as credential-shaped values,
// each array gets credential-shaped elements), and the planted secrets.
// They derive from the body's hash, so they cannot already be in it.
func plant(obj map[string]any, body []byte) ([]byte, []string) {
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	seeds := []string{
		"plantedA" + h[:24],              // under secret names
		"ghp_plantedB" + h[:28],          // a GitHub token under a harmless name
		"AKIA" + strings.ToUpper(h[:16]), // an AWS key id
		"plantedC" + h[24:48],            // the password of a URL
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
			v["GITHUB_TOKEN"] = seeds[0]
			v["db_Password"] = seeds[0]
			v["note"] = "see " + seeds[1] + " here"
			v["clone"] = "https://x-access-token:" + seeds[3] + "@github.com/acme/web-app.git"
			v["aws"] = seeds[2]
			return v
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
			return append(v, seeds[1], seeds[2], "https://"+seeds[3]+"@example.com/x")
		}
		return v
	}
	b, err := json.Marshal(walk(obj))
	if err != nil {
		panic(err)
	}
	return b, seeds
}
