package uploads

import (
	"fmt"
	"strings"

	"github.com/go-git/gcfg/v2"

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

// remote is one `[remote "name"]` subsection: its name and first URL.
type remote struct {
	name, url string
}

// remoteOf parses a Git configuration and returns its `origin` remote, else
// the first remote (in file order) that has a URL. The message of an error
// is meant for the uploader.
func remoteOf(text string) (Remote, error) {
	remotes, err := remotesOf(text)
	if err != nil {
		return Remote{}, fmt.Errorf("not a valid Git configuration (%v)", err)
	}
	var chosen *remote
	for n := range remotes {
		r := &remotes[n]
		if r.url == "" {
			continue
		}
		if chosen == nil || r.name == "origin" {
			chosen = r
		}
		if r.name == "origin" {
			break
		}
	}
	if chosen == nil {
		return Remote{}, fmt.Errorf("the Git configuration has no remote with a URL")
	}
	u, err := repourl.Normalize(chosen.url)
	if err != nil {
		return Remote{}, fmt.Errorf("the URL of remote %q is not a remote repository URL", chosen.name)
	}
	return Remote{Name: chosen.name, URL: u}, nil
}

// remotesOf lists the remotes of a Git configuration in the order their
// names first appear, each with its first non-blank URL (a remote may list
// several, and Git fetches from the first). As in Git, section and key
// names are case-insensitive and a remote's name is not; a remote named
// twice is one remote.
func remotesOf(text string) ([]remote, error) {
	var remotes []remote
	at := map[string]int{}
	err := gcfg.ReadWithCallback(strings.NewReader(text), func(section, sub, key, value string, _ bool) error {
		if !strings.EqualFold(section, "remote") || sub == "" {
			return nil
		}
		n, seen := at[sub]
		if !seen {
			n = len(remotes)
			at[sub] = n
			remotes = append(remotes, remote{name: sub})
		}
		if strings.EqualFold(key, "url") && remotes[n].url == "" && strings.TrimSpace(value) != "" {
			remotes[n].url = value
		}
		return nil
	})
	return remotes, err
}
