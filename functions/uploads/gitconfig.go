package uploads

import (
	"fmt"
	"strings"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/acme/codescan-api/shared/repourl"
)

// Remote is what a Git configuration tells about the scanned repository.
// Only the canonical URL is kept: the configuration itself can hold
// credentials (remote URLs with tokens, `http.extraheader` authorization
// headers), so it is never stored.
type Remote struct {
	Name string // the remote's name, e.g. "origin"
	URL  string // canonical, credentials dropped (see repourl.Normalize)
}

// remoteOf parses a Git configuration and returns its `origin` remote, else
// the first remote (in file order) that has a URL. The message of an error
// is meant for the uploader.
func remoteOf(text string) (Remote, error) {
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(strings.NewReader(text)).Decode(cfg); err != nil {
		return Remote{}, fmt.Errorf("not a valid Git configuration (%v)", err)
	}
	var chosen *gitconfig.Subsection
	for _, sub := range cfg.Section("remote").Subsections {
		if firstURL(sub) == "" {
			continue
		}
		if chosen == nil || sub.Name == "origin" {
			chosen = sub
		}
		if sub.Name == "origin" {
			break
		}
	}
	if chosen == nil {
		return Remote{}, fmt.Errorf("the Git configuration has no remote with a URL")
	}
	u, err := repourl.Normalize(firstURL(chosen))
	if err != nil {
		return Remote{}, fmt.Errorf("the URL of remote %q is not a remote repository URL", chosen.Name)
	}
	return Remote{Name: chosen.Name, URL: u}, nil
}

// firstURL is the remote's first URL: a remote may list several, and Git
// fetches from the first.
func firstURL(sub *gitconfig.Subsection) string {
	for _, u := range sub.OptionAll("url") {
		if strings.TrimSpace(u) != "" {
			return u
		}
	}
	return ""
}
