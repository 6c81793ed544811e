package repourl

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzNormalize: any text is ErrNotRemote, or a canonical URL: https, no
// user information (credentials), query or fragment, a lower-case host,
// a path without a trailing slash or `.git`, and a fixed point of
// Normalize (what is stored normalizes to itself when it is compared).
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"git@github.com:acme/web-app.git", "ssh://git@GitHub.com:2222/acme/web-app/", "git+ssh://git@github.com/acme/web-app.git",
		"git://github.com/acme/web-app.git", "https://x-access-token:ghs_secret@github.com/acme/web-app.git",
		"https://user@github.com/acme/web-app.git?foo=bar#frag", "  https://github.com/acme/web-app\n", "github.com/acme/web-app",
		"https://github.com//acme/./web-app", "https://git.corp.example:8443/team/sub/repo.git", "user:pass@host.example:org/repo.git",
		"http://10.0.0.5:8080/org/repo", "https://dev.azure.com/acme/Web%20App/_git/web-app", "https://h.example/a%3Fb%23c",
		"git@ssh.dev.azure.com:v3/acme/Web%20App/web-app", "https://[::1]/org/repo", "C:/src/repo", "file:///srv/git/repo.git",
		"../repo", "https://github.com/", "mailto:someone@example.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := Normalize(raw)
		if err != nil {
			if !errors.Is(err, ErrNotRemote) || out != "" {
				t.Fatalf("Normalize(%q) = %q, %v", raw, out, err)
			}
			return
		}
		u, err := url.Parse(out)
		switch {
		case err != nil:
			t.Fatalf("Normalize(%q) = %q, not a URL: %v", raw, out, err)
		case u.Scheme != "https" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.Contains(out, "?"):
			t.Fatalf("Normalize(%q) = %q: not a plain https URL", raw, out)
		case u.Host == "" || u.Host != strings.ToLower(u.Host) || strings.ContainsAny(out, " \t\r\n\\"):
			t.Fatalf("Normalize(%q) = %q: host %q", raw, out, u.Host)
		case strings.Trim(u.Path, "/") == "" || strings.HasSuffix(out, "/") || strings.HasSuffix(out, ".git"):
			t.Fatalf("Normalize(%q) = %q: path %q", raw, out, u.Path)
		}
		if again, err := Normalize(out); err != nil || again != out {
			t.Fatalf("Normalize(%q) = %q, but Normalize(%q) = %q, %v", raw, out, out, again, err)
		}
	})
}
