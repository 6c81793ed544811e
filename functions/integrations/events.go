package integrations

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/prdecor"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// The headers of a GitHub webhook delivery.
const (
	SignatureHeader = "X-Hub-Signature-256"
	EventHeader     = "X-GitHub-Event"
	DeliveryHeader  = "X-GitHub-Delivery"
)

const (
	// ClaimTTL is how long a command's comment is remembered.
	ClaimTTL = 7 * 24 * time.Hour
	// MaxCommandAge: a comment older than this (its signed created_at) is
	// not acted on, well inside ClaimTTL, so a captured delivery sent
	// again once its memory expired is too old to act.
	MaxCommandAge = 72 * time.Hour
)

// Results of a delivery besides prtriage's, as its answer says them.
const (
	resultPong      = "pong"      // GitHub's ping, sent when the hook is made
	resultDuplicate = "duplicate" // a delivery or comment already acted on
)

// errForged is every refusal of a delivery's origin: no signature, a bad
// one, no such integration or no secret set. One answer (the credential
// error of every route), so an integration's uuid cannot be probed.
var errForged = httpapi.ErrUnauthenticated

type eventAnswer struct {
	Status string `json:"status"`
	Result string `json:"result"`
}

// events answers POST /integrations/scm-provider/{integration_uuid}/events:
// a delivery of the host's webhook. Its credential (GitHub's signature of
// the raw body, GitLab's token) is checked before anything of the body is
// read; a comment (GitLab: a note) that holds a command is remembered
// (replays answer 200 and do nothing), carried out, and answered on the
// pull or merge request.
func (h handlers) events(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r, routes.MaxSCMEventBytes)
	if err != nil {
		return err
	}
	in, err := h.verifyDelivery(r, body)
	if err != nil {
		return err
	}
	result, err := h.deliver(r, in, body)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, eventAnswer{Status: "ok", Result: result})
}

// verifyDelivery returns the integration a delivery names if the delivery
// carries its webhook secret as the integration's host sends it: GitHub's
// body signed with it (X-Hub-Signature-256, HMAC-SHA256), GitLab's token
// equal to it (X-Gitlab-Token), compared in constant time. A delivery
// with neither header is refused before any read.
func (h handlers) verifyDelivery(r *http.Request, body []byte) (schema.Integration, error) {
	sig, signed := signature(r.Header.Values(SignatureHeader))
	tok, tokened := hookToken(r.Header.Values(GitLabTokenHeader))
	if !signed && !tokened {
		return schema.Integration{}, errForged
	}
	in, secret, err := h.hookSecret(r)
	if err != nil {
		return schema.Integration{}, err
	}
	if in.HostProvider() == scmhost.ProviderGitLab {
		if !tokened || !tokenMatches(secret, tok) {
			return schema.Integration{}, errForged
		}
		return in, nil
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body) // a hash.Hash never fails to write
	if !signed || !hmac.Equal(mac.Sum(nil), sig) {
		return schema.Integration{}, errForged
	}
	return in, nil
}

// hookSecret reads the integration the path names and opens its webhook
// secret: errForged when there is no such integration or no secret.
func (h handlers) hookSecret(r *http.Request) (schema.Integration, []byte, error) {
	ctx := r.Context()
	in, err := h.store.Catalog.IntegrationByHook(ctx, r.PathValue("integration_uuid"))
	if errors.Is(err, ddb.ErrNotFound) || (err == nil && in.SealedWebhookSecret == "") {
		return schema.Integration{}, nil, errForged
	}
	if err != nil {
		return schema.Integration{}, nil, err
	}
	secret, err := h.secrets.open(ctx, h.sealer, in, h.now())
	if errors.Is(err, secrets.ErrMalformed) {
		h.log.Warn("webhook secret cannot be opened", "request_id", r.Header.Get(httpapi.RequestIDHeader), "integration", in.UUID)
		return schema.Integration{}, nil, errForged
	}
	return in, secret, err
}

// signature decodes the one X-Hub-Signature-256 value, "sha256=<hex>".
func signature(values []string) ([]byte, bool) {
	if len(values) != 1 {
		return nil, false
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(values[0]), "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return nil, false
	}
	sig, err := hex.DecodeString(hexSig)
	return sig, err == nil
}

var deliveryPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// incoming is a command read from a verified delivery: the comment (or
// note) that holds it, and how to answer its author on the host.
type incoming struct {
	cmd       command
	commentID int64
	reply     func(ctx context.Context, o prtriage.Outcome) error
}

// deliver acts on a verified delivery and says what it did: a command is
// read as the integration's host writes its deliveries, then carried out
// once; anything else is answered without acting.
func (h handlers) deliver(r *http.Request, in schema.Integration, body []byte) (string, error) {
	read := h.githubCommand
	if in.HostProvider() == scmhost.ProviderGitLab {
		read = h.gitlabCommand
	}
	inc, result, err := read(r, in, body)
	if err != nil || result != "" {
		return result, err
	}
	return h.carryOut(r, in, inc)
}

// githubCommand reads an issue_comment delivery's command; result is set
// when there is none to carry out (a ping, another event, a comment that
// is no command).
func (h handlers) githubCommand(r *http.Request, in schema.Integration, body []byte) (incoming, string, error) {
	switch r.Header.Get(EventHeader) {
	case "ping":
		return incoming{}, resultPong, nil
	case "issue_comment":
	default:
		return incoming{}, prtriage.Ignored, nil
	}
	ev, err := decodeComment(r.Header.Get("Content-Type"), body)
	if err != nil {
		return incoming{}, "", err
	}
	c, ok := h.commandOf(in, ev)
	if !ok {
		return incoming{}, prtriage.Ignored, nil
	}
	if !deliveryPattern.MatchString(r.Header.Get(DeliveryHeader)) {
		return incoming{}, "", httpapi.Invalid("%s must be the host's delivery id", DeliveryHeader)
	}
	post := func(ctx context.Context, o prtriage.Outcome) error { return h.post(ctx, in, ev, o) }
	return incoming{cmd: c, commentID: ev.Comment.ID, reply: post}, "", nil
}

// carryOut runs a command once. The comment is the command: a replayed
// delivery, or its body under a new delivery id, carries the same
// comment id, remembered here.
func (h handlers) carryOut(r *http.Request, in schema.Integration, inc incoming) (string, error) {
	claim := catalog.SCMCommand{CompanyID: in.CompanyID, Integration: in.UUID, CommentID: inc.commentID}
	err := h.store.Catalog.ClaimSCMCommand(r.Context(), claim, h.now(), ClaimTTL)
	if errors.Is(err, catalog.ErrSeen) {
		return resultDuplicate, nil
	}
	if err != nil {
		return "", err
	}
	o, err := h.run(r.Context(), inc.cmd)
	h.settle(r, claim, err)
	if err != nil {
		return "", err
	}
	h.answer(r, in, o, inc.reply)
	return o.Result, nil
}

// settle records how a claimed command ended: done, or failed so that the
// host's redelivery may carry it out. Should that write fail too, the
// claim's lease (catalog.SCMClaimLease) lets a later redelivery take it.
func (h handlers) settle(r *http.Request, claim catalog.SCMCommand, runErr error) {
	ctx := context.WithoutCancel(r.Context())
	var err error
	if runErr != nil {
		err = h.store.Catalog.FailSCMCommand(ctx, claim)
	} else {
		err = h.store.Catalog.CompleteSCMCommand(ctx, claim)
	}
	if err != nil {
		h.log.Error("settling a command's claim", "request_id", r.Header.Get(httpapi.RequestIDHeader), "error", httpapi.Truncate(err.Error(), 1024))
	}
}

// run carries out a command, or answers one that cannot be read with the
// grammar.
func (h handlers) run(ctx context.Context, c command) (prtriage.Outcome, error) {
	if c.unreadable != nil {
		return prtriage.Outcome{Result: prtriage.Refused, Reply: prtriage.UsageReply(c.unreadable)}, nil
	}
	return h.triager.Run(ctx, c.req)
}

// command is a comment's command, or why it cannot be read.
type command struct {
	req        prtriage.Request
	unreadable error
}

// commentEvent is what is read of an issue_comment delivery.
type commentEvent struct {
	Action string `json:"action"`
	Issue  struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	Comment struct {
		ID        int64     `json:"id"`
		Body      string    `json:"body"`
		CreatedAt time.Time `json:"created_at"`
		User      struct {
			Login string `json:"login"`
			ID    int64  `json:"id"`
		} `json:"user"`
	} `json:"comment"`
	Repository struct {
		FullName string `json:"full_name"`
		HTMLURL  string `json:"html_url"`
	} `json:"repository"`
}

// decodeComment reads a delivery's payload: the JSON body, or its
// "payload" form field when the hook was set up to send form data.
func decodeComment(contentType string, body []byte) (commentEvent, error) {
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/x-www-form-urlencoded" {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return commentEvent{}, httpapi.Invalid("The form body cannot be read")
		}
		body = []byte(form.Get("payload"))
	}
	var ev commentEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return commentEvent{}, httpapi.ErrInvalidJSON
	}
	return ev, nil
}

var repoPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$`)

// commandOf reads the command of a new comment on a pull request the
// integration decorates: ok is false for anything else (other actions,
// issues, comments that are no command, our own replies, comments older
// than MaxCommandAge, an expired integration, whose token could not
// answer).
func (h handlers) commandOf(in schema.Integration, ev commentEvent) (command, bool) {
	pr := len(ev.Issue.PullRequest) > 0 && !bytes.Equal(ev.Issue.PullRequest, []byte("null"))
	if ev.Action != "created" || !pr || !repoPattern.MatchString(ev.Repository.FullName) {
		return command{}, false
	}
	return h.commandIn(in, hostComment{
		provider: pullrequest.GitHub, webURL: ev.Repository.HTMLURL, repo: ev.Repository.FullName, number: ev.Issue.Number,
		id: ev.Comment.ID, authorID: ev.Comment.User.ID, login: ev.Comment.User.Login, body: ev.Comment.Body, createdAt: ev.Comment.CreatedAt,
	})
}

// hostComment is a comment on a pull (merge) request as a delivery of
// either host names it, its repository's path already checked.
type hostComment struct {
	provider  string // pullrequest.GitHub or pullrequest.GitLab
	webURL    string // the repository's (project's) page: its host is the host's
	repo      string // owner/name, or a GitLab project's full path
	number    int    // the pull request's number (merge request's iid)
	id        int64  // the comment's (note's) id
	authorID  int64
	login     string
	body      string
	createdAt time.Time
}

// commandIn reads the command of a comment that is not the integration's
// own, not older than MaxCommandAge, on a pull request the integration
// decorates: ok is false for anything else.
func (h handlers) commandIn(in schema.Integration, c hostComment) (command, bool) {
	if c.number <= 0 || c.id <= 0 || strconv.FormatInt(c.authorID, 10) == in.AccountID || h.now().Sub(c.createdAt) > MaxCommandAge {
		return command{}, false
	}
	u, err := url.Parse(c.webURL)
	if err != nil || u.Host == "" {
		return command{}, false
	}
	host := strings.ToLower(u.Host)
	if !prdecor.Matches(in, pullrequest.PullRequest{Provider: c.provider, Host: host, Repo: c.repo}) {
		return command{}, false
	}
	cmd, isCommand, err := prtriage.Parse(c.body)
	if !isCommand {
		return command{}, false
	}
	req := prtriage.Request{CompanyID: in.CompanyID, Integration: in.UUID, Host: host, Repo: c.repo,
		Number: c.number, Login: c.login, Provider: c.provider, Command: cmd}
	return command{req: req, unreadable: err}, true
}
