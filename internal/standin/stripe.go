package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// InvoiceCall is one POST /v1/invoices the Stripe stand-in answered.
type InvoiceCall struct {
	IdempotencyKey string
	Customer       string
	Event          string // metadata[hookinbox_event]
	InvoiceID      string // empty when the call failed
	Status         int
}

// Stripe answers the parts of the Stripe API hookinbox uses:
//
//   - POST /v1/invoices: one invoice per Idempotency-Key; a repeated key
//     gets the saved answer, as Stripe replays it.
//   - GET /v1/events: the events added with AddEvent, newest first, with
//     created[gte|gt|lte|lt], limit and starting_after, as Stripe lists them.
//   - GET /v1/events/{id}: one of those events, or 404 resource_missing.
//
// HoldInvoices makes invoice calls hang, as a slow Stripe does.
//
// Requests must carry a Bearer key when Key is set.
type Stripe struct {
	Key string

	mu      sync.Mutex
	calls   []InvoiceCall
	byKey   map[string]string // idempotency key → saved response body
	failing []int             // statuses for the next calls, injected
	events  []json.RawMessage
	created []int64
	ids     []string
	hold    *invoiceHold // set by HoldInvoices
}

// NewStripe returns a Stripe stand-in with no invoices and no events.
func NewStripe() *Stripe { return &Stripe{byKey: map[string]string{}} }

// FailNext makes the next len(statuses) invoice calls fail with these
// statuses, before anything is created (so nothing is saved for their keys).
func (s *Stripe) FailNext(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing = append(s.failing, statuses...)
}

// Calls returns every invoice call so far, in order.
func (s *Stripe) Calls() []InvoiceCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]InvoiceCall(nil), s.calls...)
}

// Invoices returns the distinct invoices created, sorted by ID.
func (s *Stripe) Invoices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var ids []string
	for _, c := range s.calls {
		if c.InvoiceID != "" && !seen[c.InvoiceID] {
			seen[c.InvoiceID] = true
			ids = append(ids, c.InvoiceID)
		}
	}
	sort.Strings(ids)
	return ids
}

// AddEvent makes a Stripe event (its JSON as delivered) listable on
// /v1/events.
func (s *Stripe) AddEvent(body []byte) error {
	var head struct {
		ID      string `json:"id"`
		Created int64  `json:"created"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.ID == "" {
		return fmt.Errorf("stand-in stripe: event without id: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, append(json.RawMessage(nil), body...))
	s.created = append(s.created, head.Created)
	s.ids = append(s.ids, head.ID)
	return nil
}

// ServeHTTP implements http.Handler.
func (s *Stripe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if s.Key != "" && r.Header.Get("Authorization") != "Bearer "+s.Key {
		stripeError(w, http.StatusUnauthorized, "invalid_request_error", "Invalid API Key provided")
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/invoices":
		s.createInvoice(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/events":
		s.listEvents(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/events/"):
		s.getEvent(w, strings.TrimPrefix(r.URL.Path, "/v1/events/"))
	default:
		stripeError(w, http.StatusNotFound, "invalid_request_error", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+")")
	}
}

func (s *Stripe) createInvoice(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		stripeError(w, http.StatusBadRequest, "invalid_request_error", "unreadable form")
		return
	}
	key := r.Header.Get("Idempotency-Key")
	call := InvoiceCall{IdempotencyKey: key, Customer: r.PostForm.Get("customer"), Event: r.PostForm.Get("metadata[hookinbox_event]")}
	if !s.wait(r, call.Event) {
		// The caller went away while held: nothing was created.
		call.Status = statusClientClosed
		s.mu.Lock()
		s.calls = append(s.calls, call)
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failing) > 0 {
		call.Status = s.failing[0]
		s.failing = s.failing[1:]
		s.calls = append(s.calls, call)
		typ := "invalid_request_error"
		if call.Status >= 500 {
			typ = "api_error"
		}
		stripeError(w, call.Status, typ, "injected failure")
		return
	}
	if call.Customer == "" {
		call.Status = http.StatusBadRequest
		s.calls = append(s.calls, call)
		stripeError(w, call.Status, "invalid_request_error", "Missing required param: customer.")
		return
	}
	body, ok := s.byKey[key]
	if !ok || key == "" {
		id := fmt.Sprintf("in_1Standin%06d", len(s.byKey)+1)
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "invoice", "customer": call.Customer, "status": "draft",
			"auto_advance": r.PostForm.Get("auto_advance") == "true",
			"description":  r.PostForm.Get("description"),
			"metadata":     map[string]string{"hookinbox_event": call.Event},
		})
		body = string(b)
		if key != "" {
			s.byKey[key] = body
		} else {
			s.byKey["\x00"+id] = body
		}
	}
	var inv struct{ ID string }
	_ = json.Unmarshal([]byte(body), &inv)
	call.InvoiceID, call.Status = inv.ID, http.StatusOK
	s.calls = append(s.calls, call)
	_, _ = io.WriteString(w, body)
}

func (s *Stripe) listEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bound := func(name string) (int64, bool) {
		v := q.Get(name)
		if v == "" {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	limit := 10
	if l, ok := bound("limit"); ok && l > 0 && l <= 100 {
		limit = int(l)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Newest first; ties by insertion order reversed, as a stable list.
	idx := make([]int, len(s.events))
	for i := range idx {
		idx[i] = len(idx) - 1 - i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.created[idx[a]] > s.created[idx[b]] })
	var page []json.RawMessage
	started := q.Get("starting_after") == ""
	more := false
	for _, i := range idx {
		c := s.created[i]
		if v, ok := bound("created[gte]"); ok && c < v {
			continue
		}
		if v, ok := bound("created[gt]"); ok && c <= v {
			continue
		}
		if v, ok := bound("created[lte]"); ok && c > v {
			continue
		}
		if v, ok := bound("created[lt]"); ok && c >= v {
			continue
		}
		if !started {
			started = s.ids[i] == q.Get("starting_after")
			continue
		}
		if len(page) == limit {
			more = true
			break
		}
		page = append(page, s.events[i])
	}
	if page == nil {
		page = []json.RawMessage{}
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "url": "/v1/events", "has_more": more, "data": page})
	_, _ = w.Write(b)
}

func stripeError(w http.ResponseWriter, status int, typ, msg string) {
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"type": typ, "message": msg}})
	_, _ = w.Write(b)
}
