package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

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
