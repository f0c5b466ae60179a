package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// Stripe answers the parts of the Stripe API hookinbox uses:
//
//   - POST /v1/invoices: one invoice per Idempotency-Key; a repeated key
//     gets the saved answer, as Stripe replays it, until
//     ForgetIdempotencyKeys (Stripe forgets keys after 24 hours).
//   - GET /v1/invoices: the invoices created, newest first, with customer,
//     created[gte|gt|lte|lt], limit and starting_after, as Stripe lists them.
//   - GET /v1/events: the events added with AddEvent, newest first, with
//     created[gte|gt|lte|lt], limit, starting_after and types[] (as
//     types[] or types[N]), as Stripe lists them.
//   - GET /v1/events/{id}: one of those events, or 404 resource_missing.
//   - GET /v1/subscriptions/{id}: the subscription as SetSubscription, or
//     the newest subscription event given to AddEvent or Apply, left it;
//     404 for one it never heard of.
//   - GET /v2/core/events/{id}: the v2 events added with AddThinEvent, or
//     404 not_found.
//   - GET of any other object path set with SetObject
//     (/v1/checkout/sessions/cs_..., /v2/core/accounts/acct_...): its body
//     as set; 404 for a path never set.
//   - PUT /_standin/<path>: AddThinEvent for /v2/core/events/{id},
//     SetObject for any other /v1/ or /v2/ path (no key needed): how
//     `hookinbox send stripe --thin` prepares a running stack's stand-in.
//
// HoldInvoices makes invoice calls hang, as a slow Stripe does. The
// first invoice call of each event for customer RefusedOnce is refused.
//
// Requests must carry a Bearer key when Key (or SetKey) is set; a request
// with another key gets 401, as Stripe answers a rolled key.
type Stripe struct {
	// Key is the API key accepted; set it before serving, or use SetKey.
	Key string

	mu         sync.Mutex
	calls      []InvoiceCall
	byKey      map[string]string // idempotency key → saved response body
	invoices   []stripeInvoice   // in creation order
	failing    []int             // statuses for the next calls, injected
	refusedFor map[string]bool   // events whose invoice for RefusedOnce was refused
	refused    int               // requests answered 401
	events     []json.RawMessage
	created    []int64
	ids        []string
	types      []string
	queries    []string // the query of every GET /v1/events
	subs       map[string]stripeSubscription
	hold       *invoiceHold               // set by HoldInvoices
	v2Events   map[string]json.RawMessage // AddThinEvent: id → v2 event
	objects    map[string]json.RawMessage // SetObject: path → body
	gets       []string                   // the path of every GET of a v2 event or a SetObject path
	versions   []string                   // the Stripe-Version of each of those GETs
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

// stripeSubscription is a subscription's state and the created time of
// the event that set it (0 when set by SetSubscription).
type stripeSubscription struct {
	customer, status string
	at               int64
}

// NewStripe returns a Stripe stand-in with no invoices and no events.
func NewStripe() *Stripe {
	return &Stripe{byKey: map[string]string{}, subs: map[string]stripeSubscription{},
		v2Events: map[string]json.RawMessage{}, objects: map[string]json.RawMessage{}}
}

// AddThinEvent makes the v2 event of a thin notification (its JSON as
// GET /v2/core/events/{id} answers it) fetchable.
func (s *Stripe) AddThinEvent(body []byte) error {
	var head struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.ID == "" {
		return fmt.Errorf("stand-in stripe: v2 event without id: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.v2Events[head.ID] = append(json.RawMessage(nil), body...)
	return nil
}

// SetObject sets what GET path answers: an object a thin event's
// related_object.url names, in its current state.
func (s *Stripe) SetObject(path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[path] = append(json.RawMessage(nil), body...)
}

// ThinGets returns the path and the Stripe-Version header of every GET of
// a v2 event or of a SetObject path so far, in order.
func (s *Stripe) ThinGets() (paths, versions []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.gets...), append([]string(nil), s.versions...)
}

// put serves PUT /_standin/v2/core/events/{id} (AddThinEvent) and PUT
// /_standin/<object path> (SetObject), for `hookinbox send stripe --thin`
// against a running stack: what Stripe holds before it sends a thin event.
func (s *Stripe) put(w http.ResponseWriter, r *http.Request, path string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	switch {
	case err != nil:
		stripeError(w, http.StatusBadRequest, "invalid_request_error", "unreadable body")
		return
	case !strings.HasPrefix(path, "/v1/") && !strings.HasPrefix(path, "/v2/"):
		stripeError(w, http.StatusNotFound, "invalid_request_error", "PUT /_standin/v1/... or /_standin/v2/...")
		return
	case strings.HasPrefix(path, "/v2/core/events/"):
		if err := s.AddThinEvent(body); err != nil {
			stripeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
	default:
		s.SetObject(path, body)
	}
	_, _ = io.WriteString(w, "{}")
}

// getThin answers GET of a v2 event or a SetObject path; ok is false when
// path is neither kind.
func (s *Stripe) getThin(w http.ResponseWriter, r *http.Request) (ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, isEvent := strings.CutPrefix(r.URL.Path, "/v2/core/events/")
	body, known := s.objects[r.URL.Path]
	if isEvent {
		body, known = s.v2Events[id]
	} else if !known {
		return false
	}
	s.gets = append(s.gets, r.URL.Path)
	s.versions = append(s.versions, r.Header.Get("Stripe-Version"))
	if !known {
		stripeError(w, http.StatusNotFound, "invalid_request_error", "No such event: '"+id+"'")
		return true
	}
	_, _ = w.Write(body)
	return true
}

// SetKey replaces the API key accepted, as rolling a key in the Stripe
// dashboard does; requests with the old key get 401.
func (s *Stripe) SetKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Key = key
}

// Refused returns how many requests were answered 401 for their key.
func (s *Stripe) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// ForgetIdempotencyKeys forgets every saved Idempotency-Key, as Stripe
// does 24 hours after a key was first used: a request with an old key then
// creates a new invoice. The invoices stay listable.
func (s *Stripe) ForgetIdempotencyKeys() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byKey = map[string]string{}
}

// SetSubscription sets the subscription's current state, as GET
// /v1/subscriptions/{id} answers it, whatever events say.
func (s *Stripe) SetSubscription(id, customer, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[id] = stripeSubscription{customer: customer, status: status}
}

// Apply updates the objects a Stripe event (its JSON as delivered)
// describes, as Stripe's own state is after sending it, without making the
// event listable: a customer.subscription.* event sets its subscription,
// unless an event with a later created time set it already (events of the
// same second apply in call order); a completed subscription checkout
// makes its subscription active unless it is known already.
func (s *Stripe) Apply(body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply(body)
}

// apply is Apply; s.mu is held.
func (s *Stripe) apply(body []byte) {
	var ev struct {
		Type    string `json:"type"`
		Created int64  `json:"created"`
		Data    struct {
			Object struct {
				ID           string          `json:"id"`
				Object       string          `json:"object"`
				Customer     json.RawMessage `json:"customer"`
				Status       string          `json:"status"`
				Mode         string          `json:"mode"`
				Subscription string          `json:"subscription"`
			} `json:"object"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &ev) != nil {
		return
	}
	o := ev.Data.Object
	var customer string
	if json.Unmarshal(o.Customer, &customer) != nil {
		var obj struct{ ID string }
		_ = json.Unmarshal(o.Customer, &obj)
		customer = obj.ID
	}
	switch {
	case o.Object == "subscription" && o.ID != "":
		if old, ok := s.subs[o.ID]; ok && old.at > ev.Created {
			return
		}
		s.subs[o.ID] = stripeSubscription{customer: customer, status: o.Status, at: ev.Created}
	case o.Object == "checkout.session" && o.Mode == "subscription" && o.Subscription != "":
		// A completed subscription checkout started the subscription.
		if _, ok := s.subs[o.Subscription]; !ok {
			s.subs[o.Subscription] = stripeSubscription{customer: customer, status: "active", at: ev.Created}
		}
	}
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

// AddEvent makes a Stripe event (its JSON as delivered) listable on
// /v1/events.
func (s *Stripe) AddEvent(body []byte) error {
	var head struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Created int64  `json:"created"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.ID == "" {
		return fmt.Errorf("stand-in stripe: event without id: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apply(body)
	s.events = append(s.events, append(json.RawMessage(nil), body...))
	s.created = append(s.created, head.Created)
	s.ids = append(s.ids, head.ID)
	s.types = append(s.types, head.Type)
	return nil
}

// ServeHTTP implements http.Handler.
func (s *Stripe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if path, ok := strings.CutPrefix(r.URL.Path, "/_standin"); ok && r.Method == http.MethodPut {
		s.put(w, r, path)
		return
	}
	s.mu.Lock()
	key := s.Key
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		s.refused++
		s.mu.Unlock()
		stripeError(w, http.StatusUnauthorized, "invalid_request_error", "Invalid API Key provided")
		return
	}
	s.mu.Unlock()
	if r.Method == http.MethodGet && s.getThin(w, r) {
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/invoices":
		s.createInvoice(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/invoices":
		s.listInvoices(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/events":
		s.listEvents(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/events/"):
		s.getEvent(w, strings.TrimPrefix(r.URL.Path, "/v1/events/"))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/subscriptions/"):
		s.getSubscription(w, strings.TrimPrefix(r.URL.Path, "/v1/subscriptions/"))
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
	if call.Customer == RefusedOnce && !s.refusedFor[call.Event+" "+key] {
		if s.refusedFor == nil {
			s.refusedFor = map[string]bool{}
		}
		s.refusedFor[call.Event+" "+key] = true
		call.Status = http.StatusBadRequest
		s.calls = append(s.calls, call)
		stripeError(w, call.Status, "invalid_request_error", refusedOnceMessage)
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
		id := fmt.Sprintf("in_1Standin%06d", len(s.invoices)+1)
		metadata := map[string]string{}
		for k, v := range r.PostForm {
			if name, ok := strings.CutPrefix(k, "metadata["); ok && strings.HasSuffix(name, "]") && len(v) > 0 {
				metadata[strings.TrimSuffix(name, "]")] = v[0]
			}
		}
		created := time.Now().Unix()
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "invoice", "customer": call.Customer, "status": "draft", "created": created,
			"auto_advance": r.PostForm.Get("auto_advance") == "true",
			"description":  r.PostForm.Get("description"),
			"metadata":     metadata,
		})
		body = string(b)
		s.invoices = append(s.invoices, stripeInvoice{id: id, customer: call.Customer, created: created, body: b})
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

func (s *Stripe) getSubscription(w http.ResponseWriter, id string) {
	s.mu.Lock()
	sub, ok := s.subs[id]
	s.mu.Unlock()
	if !ok {
		stripeError(w, http.StatusNotFound, "invalid_request_error", "No such subscription: '"+id+"'")
		return
	}
	b, _ := json.Marshal(map[string]any{"id": id, "object": "subscription", "customer": sub.customer, "status": sub.status})
	_, _ = w.Write(b)
}

func (s *Stripe) listEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	wanted := map[string]bool{}
	for k, vs := range q {
		if k == "types[]" || strings.HasPrefix(k, "types[") && strings.HasSuffix(k, "]") {
			for _, v := range vs {
				wanted[v] = true
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries = append(s.queries, r.URL.RawQuery)
	if len(wanted) == 0 {
		writeList(w, q, "/v1/events", s.ids, s.created, s.events)
		return
	}
	var ids []string
	var created []int64
	var bodies []json.RawMessage
	for i, typ := range s.types {
		if wanted[typ] {
			ids, created, bodies = append(ids, s.ids[i]), append(created, s.created[i]), append(bodies, s.events[i])
		}
	}
	writeList(w, q, "/v1/events", ids, created, bodies)
}

// EventQueries returns the raw query of every GET /v1/events so far.
func (s *Stripe) EventQueries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// writeList answers a Stripe list request over objects given in creation
// order (ids, their created times and bodies): newest first, ties by
// creation order reversed, with created[gte|gt|lte|lt], limit and
// starting_after.
func writeList(w http.ResponseWriter, q url.Values, path string, ids []string, createdAt []int64, bodies []json.RawMessage) {
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
	// Newest first; ties by insertion order reversed, as a stable list.
	idx := make([]int, len(bodies))
	for i := range idx {
		idx[i] = len(idx) - 1 - i
	}
	sort.SliceStable(idx, func(a, b int) bool { return createdAt[idx[a]] > createdAt[idx[b]] })
	var page []json.RawMessage
	started := q.Get("starting_after") == ""
	more := false
	for _, i := range idx {
		c := createdAt[i]
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
			started = ids[i] == q.Get("starting_after")
			continue
		}
		if len(page) == limit {
			more = true
			break
		}
		page = append(page, bodies[i])
	}
	if page == nil {
		page = []json.RawMessage{}
	}
	b, _ := json.Marshal(map[string]any{"object": "list", "url": path, "has_more": more, "data": page})
	_, _ = w.Write(b)
}

func stripeError(w http.ResponseWriter, status int, typ, msg string) {
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"type": typ, "message": msg}})
	_, _ = w.Write(b)
}
