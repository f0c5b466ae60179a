package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// InvoiceCall is one POST /v1/invoices the Stripe stand-in answered.
type InvoiceCall struct {
	IdempotencyKey string
	Customer       string
	Event          string // metadata[hookinbox_event]
	InvoiceID      string // empty when the call failed
	Status         int
}

// RefusedOnce is the customer the stand-in does not know the first time
// an event asks for its invoice (400, No such customer), and knows the
// next: an event of this customer is parked, as a permanent failure, and
// its replay creates the invoice. It is how the local stack parks an
// event on demand (pipeline.ParkExample).
const RefusedOnce = "cus_refused_once"

// refusedOnceMessage is the stand-in's answer to RefusedOnce's first
// invoice of an event: it is the parked event's reason, and says why a
// replay succeeds.
const refusedOnceMessage = "No such customer: '" + RefusedOnce + "' (the local Stripe stand-in refuses the first invoice of each event for this customer, " +
	"so that the event is parked; replay it and the invoice is created)"

// stripeInvoice is an invoice the stand-in created.
type stripeInvoice struct {
	id, customer string
	created      int64
	body         json.RawMessage
}

// ForgetIdempotencyKeys forgets every saved Idempotency-Key, as Stripe
// does 24 hours after a key was first used: a request with an old key then
// creates a new invoice. The invoices stay listable.
func (s *Stripe) ForgetIdempotencyKeys() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byKey = map[string]string{}
}

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

// createInvoice serves POST /v1/invoices: one invoice per
// Idempotency-Key, unless a failure was injected (FailNext) or the call
// is held (HoldInvoices) until its caller goes away.
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
	if s.refuseOnce(w, call, key) {
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
		body = s.newInvoice(call.Customer, r.PostForm)
		if key != "" {
			s.byKey[key] = body
		}
	}
	var inv struct{ ID string }
	_ = json.Unmarshal([]byte(body), &inv)
	call.InvoiceID, call.Status = inv.ID, http.StatusOK
	s.calls = append(s.calls, call)
	_, _ = io.WriteString(w, body)
}

// refuseOnce answers call 400 when it is the first for its event of
// customer RefusedOnce, and says whether it did; s.mu is held.
func (s *Stripe) refuseOnce(w http.ResponseWriter, call InvoiceCall, key string) bool {
	if call.Customer != RefusedOnce || s.refusedFor[call.Event+" "+key] {
		return false
	}
	if s.refusedFor == nil {
		s.refusedFor = map[string]bool{}
	}
	s.refusedFor[call.Event+" "+key] = true
	call.Status = http.StatusBadRequest
	s.calls = append(s.calls, call)
	stripeError(w, call.Status, "invalid_request_error", refusedOnceMessage)
	return true
}

// newInvoice creates a draft invoice for customer from the form and
// returns its JSON; s.mu is held.
func (s *Stripe) newInvoice(customer string, form url.Values) string {
	id := fmt.Sprintf("in_1Standin%06d", len(s.invoices)+1)
	metadata := map[string]string{}
	for k, v := range form {
		if name, ok := strings.CutPrefix(k, "metadata["); ok && strings.HasSuffix(name, "]") && len(v) > 0 {
			metadata[strings.TrimSuffix(name, "]")] = v[0]
		}
	}
	created := time.Now().Unix()
	b, _ := json.Marshal(map[string]any{
		"id": id, "object": "invoice", "customer": customer, "status": "draft", "created": created,
		"auto_advance": form.Get("auto_advance") == "true",
		"description":  form.Get("description"),
		"metadata":     metadata,
	})
	s.invoices = append(s.invoices, stripeInvoice{id: id, customer: customer, created: created, body: b})
	return string(b)
}

func (s *Stripe) listInvoices(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	var created []int64
	var bodies []json.RawMessage
	for _, inv := range s.invoices {
		if c := q.Get("customer"); c == "" || c == inv.customer {
			ids, created, bodies = append(ids, inv.id), append(created, inv.created), append(bodies, inv.body)
		}
	}
	writeList(w, q, "/v1/invoices", ids, created, bodies)
}
