package standin

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// Mollie stands in for the part of Mollie's API the processor calls:
// GET /v2/payments/{id} with the API key as a bearer token. Payments are
// set by the test or the local stack (SetPayment); an unknown payment
// answers 404 as Mollie does. It counts fetches per payment. Safe for
// concurrent use.
type Mollie struct {
	APIKey string

	mu       sync.Mutex
	payments map[string]MolliePayment
	fetches  map[string]int
}

// MolliePayment is the part of a Mollie payment the stand-in serves.
type MolliePayment struct {
	Resource    string         `json:"resource"` // "payment"; set by SetPayment
	ID          string         `json:"id"`
	Mode        string         `json:"mode"`   // "test" or "live"
	Status      string         `json:"status"` // open, pending, authorized, paid, canceled, expired, failed
	Amount      MollieAmount   `json:"amount"`
	Description string         `json:"description"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   string         `json:"createdAt"`
	PaidAt      string         `json:"paidAt,omitempty"`
}

// MollieAmount is a Mollie amount: a decimal string and a currency.
type MollieAmount struct {
	Value    string `json:"value"`
	Currency string `json:"currency"`
}

// NewMollie returns a stand-in accepting apiKey.
func NewMollie(apiKey string) *Mollie {
	return &Mollie{APIKey: apiKey, payments: map[string]MolliePayment{}, fetches: map[string]int{}}
}

// SetPayment creates or changes a payment, as Mollie's state changes
// before it notifies.
func (m *Mollie) SetPayment(p MolliePayment) {
	p.Resource = "payment"
	m.mu.Lock()
	defer m.mu.Unlock()
	m.payments[p.ID] = p
}

// Fetches returns how many times payment id was fetched with the key.
func (m *Mollie) Fetches(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fetches[id]
}

// ServeHTTP serves the API, and PUT /_standin/payments/{id} (a
// MolliePayment as JSON), through which `hookinbox send mollie` sets a
// payment on the local stack.
func (m *Mollie) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, isPayment := strings.CutPrefix(r.URL.Path, "/v2/payments/")
	switch {
	case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/_standin/payments/"):
		m.put(w, r)
	case r.Method == http.MethodGet && isPayment && !strings.Contains(id, "/"):
		m.payment(w, r, id)
	default:
		mollieError(w, http.StatusNotFound, "Not Found", "The resource does not exist")
	}
}

func (m *Mollie) payment(w http.ResponseWriter, r *http.Request, id string) {
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(key), []byte(m.APIKey)) != 1 {
		mollieError(w, http.StatusUnauthorized, "Unauthorized Request", "Missing authentication, or failed to authenticate")
		return
	}
	m.mu.Lock()
	p, found := m.payments[id]
	m.fetches[id]++
	m.mu.Unlock()
	if !found {
		mollieError(w, http.StatusNotFound, "Not Found", "No payment exists with token "+id+".")
		return
	}
	w.Header().Set("Content-Type", "application/hal+json")
	_ = json.NewEncoder(w).Encode(p)
}

func (m *Mollie) put(w http.ResponseWriter, r *http.Request) {
	var p MolliePayment
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&p); err != nil || p.ID == "" || p.Status == "" {
		mollieError(w, http.StatusBadRequest, "Bad Request", "want a payment with id and status")
		return
	}
	m.SetPayment(p)
	writeJSON(w, http.StatusOK, p)
}

// mollieError writes Mollie's error shape (application/hal+json).
func mollieError(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/hal+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "title": title, "detail": detail})
}
