package console

import (
	"net/http"
	"slices"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
)

// personalView is the Personal data page.
type personalView struct {
	Erasures []inbox.Erasure // newest first
	Report   *privacy.Report // an export's
	Problems []string
}

// personalPage shows the export and erase forms and the audit records
// of past erasures.
func (s *Server) personalPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "personal", page{Title: "Personal data", Nav: "personal", Body: s.personal(r, nil)})
}

// personal reads the audit records around an export's report.
func (s *Server) personal(r *http.Request, rep *privacy.Report) personalView {
	v := personalView{Report: rep}
	es, err := s.stack.Erasures(r.Context())
	if err != nil {
		v.Problems = append(v.Problems, err.Error())
	}
	slices.Reverse(es)
	v.Erasures = es
	return v
}

// exportLookup lists what the inbox holds about a subject, as `hookinbox
// export` does. It changes nothing, and keeps the subject nowhere.
func (s *Server) exportLookup(w http.ResponseWriter, r *http.Request) {
	sub, err := parseSubject(r.PostForm.Get("subject"))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	rep, err := s.stack.Export(r.Context(), []provider.Subject{sub})
	if err != nil {
		s.fail(w, r, http.StatusBadGateway, err.Error())
		return
	}
	s.render(w, r, http.StatusOK, "personal", page{Title: "Personal data", Nav: "personal", Body: s.personal(r, &rep)})
}
