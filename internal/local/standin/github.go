package standin

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GitHub stands in for the parts of GitHub's REST API the reconciler
// calls, for any hook path (repos/<owner>/<repo>/hooks/<id>,
// orgs/<org>/hooks/<id>): GET /{hook}/deliveries (newest first,
// per_page and an opaque cursor, the next page in the Link header's
// rel="next"), GET /{hook}/deliveries/{id} (the delivery with its
// request headers and payload) and POST /{hook}/deliveries/{id}/attempts
// (counted, answered 202), each with the bearer Token. Deliveries are
// added by the test (AddDelivery), or on the local stack with
// POST /_standin/deliveries/{hook} (a GitHubDelivery as JSON, with its
// headers and payload). It counts the records fetched per GUID
// and the redeliveries asked for. Safe for concurrent use.
type GitHub struct {
	Token string
	// MaxPage, when set, caps per_page (GitHub's own cap is 100), so a
	// test sees the Link header's paging.
	MaxPage int

	mu          sync.Mutex
	deliveries  map[string][]GitHubDelivery // by hook, oldest first
	nextID      int64
	records     map[string]int // GUID → records fetched
	redelivered int
}

// GitHubDelivery is one delivery of a hook as the stand-in serves it.
type GitHubDelivery struct {
	ID          int64             `json:"id"`
	GUID        string            `json:"guid"`
	DeliveredAt time.Time         `json:"delivered_at"`
	Redelivery  bool              `json:"redelivery"`
	Status      string            `json:"status"`
	StatusCode  int               `json:"status_code"`
	Event       string            `json:"event"`
	Action      string            `json:"action,omitempty"`
	Headers     map[string]string `json:"-"`
	Payload     json.RawMessage   `json:"-"`
}

// gitHubDeliveryIn is a delivery as POST /_standin/deliveries/{hook} takes it.
type gitHubDeliveryIn struct {
	GitHubDelivery
	Headers map[string]string `json:"headers"`
	Payload json.RawMessage   `json:"payload"`
}

// NewGitHub returns a stand-in accepting token.
func NewGitHub(token string) *GitHub {
	return &GitHub{Token: token, deliveries: map[string][]GitHubDelivery{}, records: map[string]int{}}
}

// AddDelivery records a delivery of hook (its ID is assigned) and returns it.
func (g *GitHub) AddDelivery(hook string, d GitHubDelivery) GitHubDelivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nextID++
	d.ID = g.nextID
	if d.Status == "" {
		d.Status = "OK"
		if d.StatusCode >= 300 || d.StatusCode == 0 {
			d.Status = "failed"
		}
	}
	hook = strings.Trim(hook, "/")
	g.deliveries[hook] = append(g.deliveries[hook], d)
	return d
}

// Records returns how many times a delivery record of guid was fetched.
func (g *GitHub) Records(guid string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.records[guid]
}

// Redelivered returns how many redeliveries were asked for.
func (g *GitHub) Redelivered() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.redelivered
}

// ServeHTTP serves the deliveries API.
func (g *GitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if hook, ok := strings.CutPrefix(r.URL.Path, "/_standin/deliveries/"); ok && r.Method == http.MethodPost {
		var in gitHubDeliveryIn
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&in); err != nil || in.GUID == "" || in.Event == "" || len(in.Payload) == 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "want a delivery with guid, event and payload"})
			return
		}
		in.GitHubDelivery.Headers, in.GitHubDelivery.Payload = in.Headers, in.Payload
		if in.DeliveredAt.IsZero() {
			in.DeliveredAt = time.Now().UTC()
		}
		writeJSON(w, http.StatusOK, g.AddDelivery(hook, in.GitHubDelivery))
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(tok), []byte(g.Token)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	hook, rest, ok := strings.Cut(strings.Trim(r.URL.Path, "/"), "/deliveries")
	rest = strings.Trim(rest, "/")
	id, attempts := strings.CutSuffix(rest, "/attempts")
	switch {
	case !ok:
	case r.Method == http.MethodGet && rest == "":
		g.list(w, r, hook)
		return
	case r.Method == http.MethodGet:
		g.record(w, hook, id)
		return
	case r.Method == http.MethodPost && attempts:
		g.mu.Lock()
		g.redelivered++
		g.mu.Unlock()
		writeJSON(w, http.StatusAccepted, map[string]string{})
		return
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func (g *GitHub) list(w http.ResponseWriter, r *http.Request, hook string) {
	size, err := strconv.Atoi(r.URL.Query().Get("per_page"))
	if err != nil || size <= 0 || size > 100 {
		size = 30
	}
	if g.MaxPage > 0 {
		size = min(size, g.MaxPage)
	}
	start, _ := strconv.Atoi(r.URL.Query().Get("cursor")) // index into the newest-first list
	g.mu.Lock()
	all := g.deliveries[hook]
	var page []GitHubDelivery
	for i := len(all) - 1 - start; i >= 0 && len(page) < size; i-- {
		page = append(page, all[i])
	}
	more := start+len(page) < len(all)
	g.mu.Unlock()
	if more {
		next := *r.URL
		next.Scheme, next.Host = "http", r.Host
		q := next.Query()
		q.Set("cursor", strconv.Itoa(start+len(page)))
		next.RawQuery = q.Encode()
		w.Header().Set("Link", `<`+next.String()+`>; rel="next"`)
	}
	if page == nil {
		page = []GitHubDelivery{}
	}
	writeJSON(w, http.StatusOK, page)
}

func (g *GitHub) record(w http.ResponseWriter, hook, id string) {
	g.mu.Lock()
	var found *GitHubDelivery
	for i, d := range g.deliveries[hook] {
		if strconv.FormatInt(d.ID, 10) == id {
			found = &g.deliveries[hook][i]
			g.records[d.GUID]++
		}
	}
	g.mu.Unlock()
	if found == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	type request struct {
		Headers map[string]string `json:"headers"`
		Payload json.RawMessage   `json:"payload"`
	}
	writeJSON(w, http.StatusOK, struct {
		GitHubDelivery
		Request request `json:"request"`
	}{*found, request{Headers: found.Headers, Payload: found.Payload}})
}
