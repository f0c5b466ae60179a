package standin

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// GoPay stands in for the parts of GoPay's REST API the processor calls:
// POST /oauth2/token (client credentials, HTTP basic auth, scope
// payment-all) and GET /payments/payment/{id} with the bearer token it
// issued. Payments are set by the test or the local stack (SetPayment);
// an unknown payment answers 404. It counts tokens issued and payments
// fetched. Safe for concurrent use.
type GoPay struct {
	ClientID, ClientSecret string

	mu       sync.Mutex
	payments map[string]GoPayPayment
	tokens   map[string]bool
	issued   int
	fetches  map[string]int
}

// GoPayPayment is the part of a GoPay payment the stand-in serves.
type GoPayPayment struct {
	ID          int64  `json:"id"`
	OrderNumber string `json:"order_number"`
	State       string `json:"state"` // CREATED, PAID, CANCELED, REFUNDED, ...
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	// Payer is the payer as GoPay serves it ({"contact": {"email": ...}}).
	Payer json.RawMessage `json:"payer,omitempty"`
}

// NewGoPay returns a stand-in accepting clientID and clientSecret.
func NewGoPay(clientID, clientSecret string) *GoPay {
	return &GoPay{ClientID: clientID, ClientSecret: clientSecret,
		payments: map[string]GoPayPayment{}, tokens: map[string]bool{}, fetches: map[string]int{}}
}

// SetPayment creates or changes a payment, as GoPay's state changes
// before it notifies.
func (g *GoPay) SetPayment(p GoPayPayment) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.payments[strconv.FormatInt(p.ID, 10)] = p
}

// Fetches returns how many times payment id was fetched.
func (g *GoPay) Fetches(id int64) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fetches[strconv.FormatInt(id, 10)]
}

// Tokens returns how many access tokens were issued.
func (g *GoPay) Tokens() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.issued
}

// ServeHTTP serves the API under any base path ending in /api or not, and
// PUT /_standin/payments/{id} (a GoPayPayment as JSON), through which
// `hookinbox send gopay` sets a payment on the local stack.
func (g *GoPay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/oauth2/token"):
		g.token(w, r)
	case r.Method == http.MethodPut && strings.HasPrefix(path, "/_standin/payments/"):
		g.put(w, r)
	case r.Method == http.MethodGet && strings.Contains(path, "/payments/payment/"):
		g.payment(w, r, path[strings.LastIndex(path, "/")+1:])
	default:
		gopayError(w, http.StatusNotFound, "not found")
	}
}

func (g *GoPay) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(id), []byte(g.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(g.ClientSecret)) != 1 {
		gopayError(w, http.StatusUnauthorized, "bad client credentials")
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "payment-all" {
		gopayError(w, http.StatusBadRequest, "want grant_type=client_credentials and scope=payment-all")
		return
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	tok := hex.EncodeToString(b[:])
	g.mu.Lock()
	g.tokens[tok] = true
	g.issued++
	g.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"token_type": "bearer", "access_token": tok, "expires_in": 1800})
}

func (g *GoPay) payment(w http.ResponseWriter, r *http.Request, id string) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	g.mu.Lock()
	valid := g.tokens[tok]
	p, found := g.payments[id]
	if valid {
		g.fetches[id]++
	}
	g.mu.Unlock()
	switch {
	case !valid:
		gopayError(w, http.StatusUnauthorized, "invalid token")
	case !found:
		gopayError(w, http.StatusNotFound, "payment not found")
	default:
		writeJSON(w, http.StatusOK, p)
	}
}

func gopayError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"date_issued": "2026-11-30T12:00:00.000+0100",
		"errors": []map[string]any{{"scope": "G", "error_code": status, "message": msg}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (g *GoPay) put(w http.ResponseWriter, r *http.Request) {
	var p GoPayPayment
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&p); err != nil || p.ID <= 0 || p.State == "" {
		gopayError(w, http.StatusBadRequest, "want a payment with id and state")
		return
	}
	g.SetPayment(p)
	writeJSON(w, http.StatusOK, p)
}
