package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Email is one message SES was asked to send.
type Email struct {
	From, To, Subject string
	Tags              map[string]string
	MessageID         string
}

// SES answers SES v2 SendEmail (POST /v2/email/outbound-emails, REST-JSON)
// and records each message. Point a client at it with AWS_ENDPOINT_URL_SESV2
// or BaseEndpoint.
type SES struct {
	mu      sync.Mutex
	sent    []Email
	failFor map[string]int // recipient → status answered instead of sending
}

// FailFor makes every message to recipient fail with status (500 and 429
// are transient to a client, 400 permanent) until called with status 0.
func (s *SES) FailFor(recipient string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failFor == nil {
		s.failFor = map[string]int{}
	}
	if status == 0 {
		delete(s.failFor, recipient)
		return
	}
	s.failFor[recipient] = status
}

// NewSES returns an SES stand-in that has sent nothing.
func NewSES() *SES { return &SES{} }

// Sent returns the messages sent so far, in order.
func (s *SES) Sent() []Email {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Email(nil), s.sent...)
}

// ServeHTTP implements http.Handler.
func (s *SES) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v2/email/outbound-emails" {
		sesError(w, http.StatusNotFound, "NotFoundException", "unexpected "+r.Method+" "+r.URL.Path)
		return
	}
	var in struct {
		FromEmailAddress string
		Destination      struct{ ToAddresses []string }
		Content          struct {
			Simple struct{ Subject struct{ Data string } }
		}
		EmailTags []struct{ Name, Value string }
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || len(in.Destination.ToAddresses) != 1 {
		sesError(w, http.StatusBadRequest, "BadRequestException", "need one recipient")
		return
	}
	e := Email{From: in.FromEmailAddress, To: in.Destination.ToAddresses[0], Subject: in.Content.Simple.Subject.Data, Tags: map[string]string{}}
	for _, tag := range in.EmailTags {
		e.Tags[tag.Name] = tag.Value
	}
	s.mu.Lock()
	if status := s.failFor[e.To]; status != 0 {
		s.mu.Unlock()
		typ, msg := "InternalFailure", "injected failure"
		switch {
		case status == http.StatusTooManyRequests:
			typ = "TooManyRequestsException"
		case status < 500:
			// As SES words it: the text names the address.
			typ = "MessageRejected"
			msg = "Email address is not verified. The following identities failed the check in region US-EAST-1: " + e.To
		}
		sesError(w, status, typ, msg)
		return
	}
	e.MessageID = fmt.Sprintf("0100018f-standin-%06d", len(s.sent)+1)
	s.sent = append(s.sent, e)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"MessageId":%q}`, e.MessageID)
}

func sesError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, fmt.Sprintf(`{"message":%q}`, msg))
}
