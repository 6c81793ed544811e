// Package chattest is the chat destinations' contract for tests: loopback
// Slack and Teams webhook servers speaking their wire formats, and the
// validation of every message against Block Kit's documented rules and the
// published Adaptive Card schema (testdata, with its licence). Only tests
// import it.
package chattest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/slack-go/slack"
)

//go:embed testdata/adaptivecards/adaptive-card.json
var adaptiveCardSchema []byte

const adaptiveCardSchemaID = "http://adaptivecards.io/schemas/adaptive-card.json"

var cardSchema = func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(adaptiveCardSchema))
	if err != nil {
		panic(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(adaptiveCardSchemaID, doc); err != nil {
		panic(err)
	}
	s, err := c.Compile(adaptiveCardSchemaID)
	if err != nil {
		panic(err)
	}
	return s
}()

// ValidateTeams checks a Teams Workflows webhook body: the message
// envelope ({"type":"message","attachments":[{"contentType":
// "application/vnd.microsoft.card.adaptive","content":…}]}) and each card
// against the Adaptive Card schema, version 1.5 at most.
func ValidateTeams(body []byte) error {
	var env struct {
		Type        string `json:"type"`
		Attachments []struct {
			ContentType string          `json:"contentType"`
			ContentURL  *string         `json:"contentUrl"`
			Content     json.RawMessage `json:"content"`
		} `json:"attachments"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return fmt.Errorf("teams envelope: %w", err)
	}
	if env.Type != "message" || len(env.Attachments) == 0 {
		return errors.New(`teams envelope: want type "message" and at least one attachment`)
	}
	for n, a := range env.Attachments {
		if a.ContentType != "application/vnd.microsoft.card.adaptive" || a.ContentURL != nil {
			return fmt.Errorf("attachment %d: contentType %q, contentUrl %v", n, a.ContentType, a.ContentURL)
		}
		card, err := jsonschema.UnmarshalJSON(bytes.NewReader(a.Content))
		if err != nil {
			return err
		}
		if err := cardSchema.Validate(card); err != nil {
			return fmt.Errorf("attachment %d: %w", n, err)
		}
		var v struct {
			Type    string `json:"type"`
			Version string `json:"version"`
		}
		if err := json.Unmarshal(a.Content, &v); err != nil || v.Type != "AdaptiveCard" || v.Version == "" || v.Version > "1.5" {
			return fmt.Errorf("attachment %d: type %q version %q (want AdaptiveCard, 1.5 at most)", n, v.Type, v.Version)
		}
	}
	return nil
}

// Block Kit limits, from Slack's Block Kit reference
// (https://api.slack.com/reference/block-kit/blocks and
// …/composition-objects#text):
const (
	maxBlocks        = 50   // "You can include up to 50 blocks in each message"
	maxSectionText   = 3000 // section: text "Maximum length … is 3000 characters"
	maxSectionFields = 10   // section: fields "Maximum number of items is 10"
	maxFieldText     = 2000 // section: fields "Maximum length for the text in each item is 2000 characters"
	maxHeaderText    = 150  // header: text "Maximum length … is 150 characters"
	maxContextElems  = 10   // context: elements "Maximum number of items is 10"
	maxActionElems   = 25   // actions: elements "There is a maximum of 25 elements"
	maxButtonText    = 75   // button: text "Maximum length … is 75 characters"
	maxButtonURL     = 3000 // button: url "Maximum length … is 3000 characters"
	maxMessageText   = 40000
)

// ValidateSlack checks an incoming-webhook body: it decodes into the
// client's typed message, every block is of a known type (slack.Blocks
// decodes an unknown one as an error), and the Block Kit limits hold; the
// escaping of mrkdwn text is checked by the caller's own expectations.
func ValidateSlack(body []byte) error {
	var msg slack.WebhookMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		return fmt.Errorf("slack message: %w", err)
	}
	if msg.Text == "" && (msg.Blocks == nil || len(msg.Blocks.BlockSet) == 0) {
		return errors.New("slack message: neither text nor blocks")
	}
	if utf8.RuneCountInString(msg.Text) > maxMessageText {
		return errors.New("slack message: text over 40,000 characters")
	}
	if msg.Blocks == nil {
		return nil
	}
	if n := len(msg.Blocks.BlockSet); n > maxBlocks {
		return fmt.Errorf("slack message: %d blocks, at most %d", n, maxBlocks)
	}
	for n, b := range msg.Blocks.BlockSet {
		if err := validateBlock(b); err != nil {
			return fmt.Errorf("block %d (%s): %w", n, b.BlockType(), err)
		}
	}
	// The typed decode keeps what it knows: a member it drops (a typo, a
	// field of another block type) makes the round trip differ.
	again, err := json.Marshal(msg.Blocks)
	if err != nil {
		return err
	}
	var orig struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(body, &orig); err != nil {
		return err
	}
	if !jsonEqual(orig.Blocks, again) {
		return fmt.Errorf("slack message: blocks do not survive the typed round trip:\n%s\n%s", orig.Blocks, again)
	}
	return nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

func text(t *slack.TextBlockObject, max int, plainOnly bool) error {
	if t == nil {
		return errors.New("missing text")
	}
	if err := t.Validate(); err != nil {
		return err
	}
	if plainOnly && t.Type != slack.PlainTextType {
		return errors.New("text must be plain_text")
	}
	if utf8.RuneCountInString(t.Text) > max {
		return fmt.Errorf("text of %d characters, at most %d", utf8.RuneCountInString(t.Text), max)
	}
	return nil
}

func validateBlock(b slack.Block) error {
	switch b := b.(type) {
	case *slack.HeaderBlock:
		return text(b.Text, maxHeaderText, true)
	case *slack.SectionBlock:
		if b.Text == nil && len(b.Fields) == 0 {
			return errors.New("section needs text or fields")
		}
		if b.Text != nil {
			if err := text(b.Text, maxSectionText, false); err != nil {
				return err
			}
		}
		if len(b.Fields) > maxSectionFields {
			return fmt.Errorf("%d fields, at most %d", len(b.Fields), maxSectionFields)
		}
		for _, f := range b.Fields {
			if err := text(f, maxFieldText, false); err != nil {
				return err
			}
		}
		return nil
	case *slack.ContextBlock:
		if n := len(b.ContextElements.Elements); n == 0 || n > maxContextElems {
			return fmt.Errorf("%d context elements, 1 to %d", n, maxContextElems)
		}
		for _, e := range b.ContextElements.Elements {
			t, ok := e.(*slack.TextBlockObject)
			if !ok {
				continue
			}
			if err := text(t, maxSectionText, false); err != nil {
				return err
			}
		}
		return nil
	case *slack.ActionBlock:
		if b.Elements == nil || len(b.Elements.ElementSet) == 0 || len(b.Elements.ElementSet) > maxActionElems {
			return errors.New("actions need 1 to 25 elements")
		}
		for _, e := range b.Elements.ElementSet {
			btn, ok := e.(*slack.ButtonBlockElement)
			if !ok {
				return fmt.Errorf("element %s not expected", e.ElementType())
			}
			if err := text(btn.Text, maxButtonText, true); err != nil {
				return err
			}
			if len(btn.URL) > maxButtonURL || !strings.HasPrefix(btn.URL, "http") {
				return fmt.Errorf("button url %q", btn.URL)
			}
		}
		return nil
	case *slack.DividerBlock:
		return nil
	}
	return fmt.Errorf("block type %s not expected in a notification", b.BlockType())
}

// Server is a loopback chat webhook: it answers like the vendor (Slack:
// 200 "ok"; Teams Workflows: 202 with an empty body), or with the next
// queued failure, and records each request's body and whether it passed
// validation.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	invalid  []error
	failures []Failure
	validate func([]byte) error
}

// Failure is an answer the server gives once instead of success.
type Failure struct {
	Status     int
	Body       string // Slack's plain-text error code (invalid_payload, no_service, …)
	RetryAfter string
}

// NewSlack starts a loopback Slack incoming webhook (path
// /services/T…/B…/…, as hooks.slack.com serves).
func NewSlack() *Server { return start(ValidateSlack, http.StatusOK, "ok") }

// NewTeams starts a loopback Teams Workflows webhook (answers 202 Accepted
// with no body, as the workflow trigger does).
func NewTeams() *Server { return start(ValidateTeams, http.StatusAccepted, "") }

func start(validate func([]byte) error, okStatus int, okBody string) *Server {
	s := &Server{validate: validate}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "invalid_payload")
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		if err := s.validate(body); err != nil {
			s.invalid = append(s.invalid, err)
		}
		var f *Failure
		if len(s.failures) > 0 {
			f = &s.failures[0]
			s.failures = s.failures[1:]
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if f != nil {
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			w.WriteHeader(f.Status)
			_, _ = io.WriteString(w, f.Body)
			return
		}
		w.WriteHeader(okStatus)
		_, _ = io.WriteString(w, okBody)
	}))
	return s
}

// Fail queues answers given before success returns.
func (s *Server) Fail(f ...Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, f...)
}

// Bodies are the request bodies received so far.
func (s *Server) Bodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// Invalid are the validation errors of the bodies received so far.
func (s *Server) Invalid() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.invalid...)
}
