package standin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

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

// getEvent answers GET /v1/events/{id} with an event added with AddEvent.
func (s *Stripe) getEvent(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.ids) - 1; i >= 0; i-- {
		if s.ids[i] == id {
			_, _ = w.Write(s.events[i])
			return
		}
	}
	w.WriteHeader(http.StatusNotFound)
	b, _ := json.Marshal(map[string]any{"error": map[string]string{
		"type": "invalid_request_error", "code": "resource_missing", "param": "id",
		"message": "No such event: '" + id + "'",
	}})
	_, _ = w.Write(b)
}
