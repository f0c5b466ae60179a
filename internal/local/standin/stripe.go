package standin

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
)

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
