package repourl

import (
	"errors"
	"testing"
)

func TestNormalize(t *testing.T) {
	const want = "https://github.com/acme/web-app"
	same := []string{
		"git@github.com:acme/web-app.git",
		"git@github.com:acme/web-app",
		"github.com:acme/web-app.git",
		"ssh://git@github.com/acme/web-app.git",
		"ssh://git@github.com:22/acme/web-app.git",
		"ssh://git@GitHub.com:2222/acme/web-app/",
		"git+ssh://git@github.com/acme/web-app.git",
		"git://github.com/acme/web-app.git",
		"https://github.com/acme/web-app",
		"https://github.com/acme/web-app.git",
		"https://github.com/acme/web-app/",
		"https://GITHUB.COM/acme/web-app.git/",
		"https://github.com:443/acme/web-app",
		"http://github.com/acme/web-app",
		"https://x-access-token:ghs_secret@github.com/acme/web-app.git",
		"https://user@github.com/acme/web-app.git?foo=bar#frag",
		"  https://github.com/acme/web-app\n",
		"github.com/acme/web-app",
		"https://github.com//acme/./web-app",
	}
	for _, in := range same {
		got, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}

	other := map[string]string{
		"https://git.corp.example:8443/team/sub/repo.git": "https://git.corp.example:8443/team/sub/repo",
		"git@gitlab.com:group/subgroup/Repo.git":          "https://gitlab.com/group/subgroup/Repo",
		"ssh://git@bitbucket.org:7999/proj/repo.git":      "https://bitbucket.org/proj/repo",
		"user:pass@host.example:org/repo.git":             "https://host.example/org/repo",
		"http://10.0.0.5:8080/org/repo":                   "https://10.0.0.5:8080/org/repo",
	}
	for in, want := range other {
		if got, err := Normalize(in); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}

	bad := []string{
		"", "   ", "/srv/git/repo.git", "../repo", "repo", "file:///srv/git/repo.git",
		"C:/src/repo", "ftp://host.example/org/repo", "https://github.com/", "https://github.com",
		"git@github.com:", "https://exa mple.com/org/repo", "mailto:someone@example.com",
		"https://[::1]/org/repo",
	}
	for _, in := range bad {
		if got, err := Normalize(in); !errors.Is(err, ErrNotRemote) {
			t.Errorf("Normalize(%q) = %q, %v; want ErrNotRemote", in, got, err)
		}
	}
}
