// Package repourl turns the many ways a Git remote is written into one
// canonical repository URL, so a repository uploaded as
// `git@github.com:Org/repo.git` and filtered as `https://github.com/Org/repo`
// is the same repository. It is used wherever a repository URL is stored or
// compared.
package repourl

import (
	"errors"
	"net"
	"net/url"
	"path"
	"strings"
)

// ErrNotRemote is returned for text that is not a remote repository URL
// (local paths, file URLs, unsupported schemes, no repository path).
var ErrNotRemote = errors.New("not a remote repository URL")

// Normalize returns the canonical form `https://<host>[:port]/<path>` of a
// remote written as:
//   - scp-style `[user@]host:org/repo(.git)`
//   - `ssh://[user@]host[:port]/org/repo(.git)` (also `git+ssh`, `ssh+git`)
//   - `git://host[:port]/org/repo(.git)`
//   - `http(s)://[user[:password]@]host[:port]/org/repo(.git)[/]`
//   - `host/org/repo` (no scheme, as typed into a filter)
//
// The host is lower-cased, credentials, query, fragment, a trailing slash
// and a `.git` suffix are dropped, the path is percent-encoded once. The
// result normalizes to itself. The port is kept only for http(s) and only
// when it is not the scheme's default: an SSH or git-protocol port says
// nothing about where the web URL lives. Path case is kept (hosts differ on
// whether paths are case-sensitive).
func Normalize(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.ContainsAny(raw, " \t\r\n\\") {
		return "", ErrNotRemote
	}
	host, port, p, err := split(raw)
	if err != nil {
		return "", err
	}
	host = strings.ToLower(strings.TrimRight(host, "."))
	p = strings.Trim(path.Clean("/"+p), "/")
	for strings.HasSuffix(p, ".git") { // until none is left: `repo/.git`, `repo.git.git`
		p = strings.Trim(path.Clean("/"+strings.TrimSuffix(p, ".git")), "/")
	}
	if !validHost(host) || p == "" {
		return "", ErrNotRemote
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	}
	// Built as a URL, so what the path decodes to (a space, `?`, `#`, `%`)
	// is escaped again and the result normalizes to itself.
	return (&url.URL{Scheme: "https", Host: host, Path: "/" + p}).String(), nil
}

// split returns the host, the port worth keeping, and the path of raw.
func split(raw string) (host, port, p string, err error) {
	if !strings.Contains(raw, "://") {
		return splitSchemeless(raw)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return "", "", "", ErrNotRemote
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		port = nonDefault(u.Port(), "443")
	case "http":
		port = nonDefault(nonDefault(u.Port(), "80"), "443") // 443 is the default of the https result
	case "ssh", "git+ssh", "ssh+git", "git":
	default:
		return "", "", "", ErrNotRemote
	}
	return u.Hostname(), port, u.Path, nil
}

// splitSchemeless handles scp-style `[user@]host:path` and `host/path`.
func splitSchemeless(raw string) (host, port, p string, err error) {
	slash := strings.Index(raw, "/")
	if at := strings.LastIndex(raw, "@"); at >= 0 && (slash < 0 || at < slash) {
		raw = raw[at+1:] // a user name (never kept)
		slash = strings.Index(raw, "/")
	}
	colon := strings.Index(raw, ":")
	if colon > 0 && (slash < 0 || colon < slash) {
		return raw[:colon], "", raw[colon+1:], nil
	}
	// `host/org/repo`: the first segment must look like a host name, so a
	// relative path such as `../repo` or `repo/sub` is not taken for one.
	if slash > 0 && strings.Contains(raw[:slash], ".") && !strings.HasPrefix(raw, ".") {
		return raw[:slash], "", raw[slash+1:], nil
	}
	return "", "", "", ErrNotRemote
}

// validHost accepts DNS names and IPv4 addresses. A one-letter host is a
// Windows drive (`C:/src/repo`), which Git treats as a local path.
func validHost(h string) bool {
	if len(h) < 2 {
		return false
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func nonDefault(port, def string) string {
	if port == def {
		return ""
	}
	return port
}
