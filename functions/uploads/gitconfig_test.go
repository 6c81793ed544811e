package uploads

import (
	"strings"
	"testing"
)

func TestRemoteOf(t *testing.T) {
	t.Parallel()
	cases := []struct{ config, name, url string }{
		// origin wins wherever it stands.
		{"[remote \"upstream\"]\n\turl = git@github.com:other/x.git\n[remote \"origin\"]\n\turl = git@github.com:acme/x.git\n", "origin", "https://github.com/acme/x"},
		// Else the first remote with a URL, in file order.
		{"[remote \"a\"]\n\tfetch = x\n[remote \"b\"]\n\turl = ssh://git@host.example:2222/team/repo.git\n[remote \"c\"]\n\turl = https://c.example/c/c\n", "b", "https://host.example/team/repo"},
		// A remote with several URLs: Git fetches from the first.
		{"[remote \"origin\"]\n\turl = https://u:p@code.example/a/b.git/\n\turl = https://mirror.example/a/b\n", "origin", "https://code.example/a/b"},
		// Quoted values, comments, include sections and odd spacing.
		{"# comment\n[include]\n\tpath = ~/.gitconfig-extra\n[remote \"origin\"] ; trailing\n url = \"git://git.example.org/proj.git\"\n", "origin", "https://git.example.org/proj"},
		// Names: section and key case-insensitive, the remote's name not; a
		// remote named twice is one. A remote with an empty name (Git
		// accepts `[remote ""]`) is no remote.
		{"[Remote \"b\"]\n\tUrl = \"\"\n[REMOTE \"Origin\"]\n\tURL = https://a.example/a/a\n[remote \"b\"]\n\turl = https://b.example/b/b\n", "b", "https://b.example/b/b"},
		{"[remote \"\"]\n\turl = https://a.example/a/a\n[remote \"b\"]\n\turl = https://b.example/b/b\n", "b", "https://b.example/b/b"},
	}
	for _, c := range cases {
		got, err := remoteOf(c.config)
		if err != nil || got.Name != c.name || got.URL != c.url {
			t.Errorf("remoteOf(%q) = %+v, %v; want %s %s", c.config, got, err, c.name, c.url)
		}
	}
	// An unusable origin is an error even when another remote would do: the
	// origin is the repository scanned.
	bad := map[string]string{
		"[remote \"origin\"\n url = x": "not a valid Git configuration (1:17: expected right bracket)",
		"[core]\n\tbare = true\n":      "has no remote with a URL",
		"[remote \"origin\"]\n\turl = ../local\n[remote \"b\"]\n\turl = https://h.example/a/b\n": `remote "origin" is not a remote repository URL`,
	}
	for config, want := range bad {
		if _, err := remoteOf(config); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("remoteOf(%q) = %v, want an error with %q", config, err, want)
		}
	}
}
