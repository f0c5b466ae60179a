package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/provider"
)

// replayForm is a replay as the console's forms give it: one event by
// key, or the DLQ (All), optionally one type and one reason of it.
type replayForm struct {
	Key, Type, Reason string
	All               bool
}

func replayFormOf(r *http.Request) replayForm {
	f := r.PostForm
	return replayForm{Key: strings.TrimSpace(f.Get("key")), All: f.Get("all") == "1", Type: f.Get("type"), Reason: f.Get("reason")}
}

// fields are what a dry run's plan is issued over.
func (f replayForm) fields() []string {
	return []string{"replay", f.Key, strconv.FormatBool(f.All), f.Type, f.Reason}
}

func (f replayForm) request() replay.Request {
	if f.All {
		return replay.Request{All: true, EventType: f.Type, Reason: f.Reason}
	}
	return replay.Request{Keys: []string{f.Key}}
}

// CLI returns the command line that makes the same replay.
func (f replayForm) CLI(stackArgs string) string {
	if !f.All {
		return "hookinbox replay --key " + shellQuote(f.Key) + stackArgs
	}
	line := "hookinbox replay --all"
	if f.Type != "" {
		line += " --type " + shellQuote(f.Type)
	}
	if f.Reason != "" {
		line += " --reason " + shellQuote(f.Reason)
	}
	return line + stackArgs
}

// what names the replay for a person.
func (f replayForm) what() string {
	switch {
	case !f.All:
		return "Replay " + f.Key
	case f.Type == "" && f.Reason == "":
		return "Replay the DLQ"
	}
	return "Replay a group of the DLQ"
}

// back is the page a replay was started from.
func (f replayForm) back() string {
	if f.All {
		return "parked"
	}
	return "event?key=" + url.QueryEscape(f.Key)
}

// planView is a dry run's page: what the change would do, and the form
// that confirms it.
type planView struct {
	Replay  *replay.Summary
	Form    replayForm
	Report  *privacy.Report
	Subject string
	Plan    string
	Action  string // where the confirmation goes
	CLI     string
	Back    string
	Nothing bool // the change would do nothing: no confirmation
}

// replayDryRun runs a replay as a dry run and shows it, with the form
// that confirms it.
func (s *Server) replayDryRun(w http.ResponseWriter, r *http.Request) {
	f := replayFormOf(r)
	if !f.All {
		key, err := s.stack.Find(r.Context(), f.Key)
		if err != nil {
			s.fail(w, r, http.StatusNotFound, err.Error())
			return
		}
		f.Key = key.String()
	}
	req := f.request()
	req.DryRun = true
	if err := req.Validate(); err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	sum, err := exclusive(s, func() (replay.Summary, error) { return s.stack.Replay(r.Context(), req, nil) })
	if err != nil {
		s.fail(w, r, statusOf(err), err.Error())
		return
	}
	v := planView{Replay: &sum, Form: f, Action: "replay", CLI: f.CLI(s.cfg.StackArgs), Back: f.back(), Nothing: sum.Moved+sum.Dropped == 0}
	if !v.Nothing {
		v.Plan = s.plans.issue(s.now(), f.fields()...)
	}
	s.render(w, r, http.StatusOK, "plan", page{Title: f.what() + ": dry run", Nav: navOf(f.All), Body: v})
}

// replayConfirm runs the replay a dry run showed, in the background.
func (s *Server) replayConfirm(w http.ResponseWriter, r *http.Request) {
	f := replayFormOf(r)
	if !s.plans.redeem(s.now(), r.PostForm.Get("plan"), f.fields()...) {
		s.fail(w, r, http.StatusConflict, errNoPlan)
		return
	}
	j, err := s.start(f.what(), f.back(), func(ctx context.Context, j *job) error {
		sum, err := s.stack.Replay(ctx, f.request(), j.progress)
		j.mu.Lock()
		j.summary = &sum
		j.mu.Unlock()
		return err
	})
	s.started(w, r, j, err)
}

// eraseDryRun lists what erasing a subject would remove, with the form
// that confirms it.
func (s *Server) eraseDryRun(w http.ResponseWriter, r *http.Request) {
	sub, err := parseSubject(r.PostForm.Get("subject"))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	rep, err := exclusive(s, func() (privacy.Report, error) {
		return s.stack.Erase(r.Context(), privacy.Request{Subjects: []provider.Subject{sub}, DryRun: true})
	})
	if err != nil {
		s.fail(w, r, statusOf(err), err.Error())
		return
	}
	v := planView{Report: &rep, Subject: string(sub), Action: "erase", Back: "personal", Nothing: len(rep.Events) == 0 && rep.Queued == 0}
	if !v.Nothing {
		v.Plan = s.plans.issue(s.now(), "erase", string(sub))
	}
	s.render(w, r, http.StatusOK, "plan", page{Title: "Erase a subject: dry run", Nav: "personal", Body: v})
}

// eraseConfirm runs the erasure a dry run showed, in the background.
func (s *Server) eraseConfirm(w http.ResponseWriter, r *http.Request) {
	sub, err := parseSubject(r.PostForm.Get("subject"))
	if err != nil || !s.plans.redeem(s.now(), r.PostForm.Get("plan"), "erase", string(sub)) {
		s.fail(w, r, http.StatusConflict, errNoPlan)
		return
	}
	j, err := s.start("Erase a subject", "personal", func(ctx context.Context, j *job) error {
		rep, err := s.stack.Erase(ctx, privacy.Request{Subjects: []provider.Subject{sub}, By: s.cfg.By})
		j.mu.Lock()
		j.report = &rep
		j.mu.Unlock()
		return err
	})
	s.started(w, r, j, err)
}

// started sends the browser to a change's page, or says why it did not
// start.
func (s *Server) started(w http.ResponseWriter, r *http.Request, j *job, err error) {
	if err != nil {
		s.fail(w, r, http.StatusConflict, err.Error())
		return
	}
	redirect(w, "job?id="+url.QueryEscape(j.id))
}

// errNoPlan is why a confirmation without its dry run is refused.
const errNoPlan = "This confirmation does not follow a dry run of the same request (or the dry run is over 10 minutes old, or was confirmed already). Run the dry run again."

// exclusive runs a dry run while no change runs, holding off the
// console's own DLQ reads: a dry run reads the DLQ too.
func exclusive[T any](s *Server, run func() (T, error)) (T, error) {
	if !s.actions.TryLock() {
		var zero T
		return zero, errBusy
	}
	defer s.actions.Unlock()
	return run()
}

// statusOf is the status of a page that failed with err.
func statusOf(err error) int {
	if errors.Is(err, errBusy) {
		return http.StatusConflict
	}
	return http.StatusBadGateway
}

// navOf is the navigation entry of a replay's pages.
func navOf(all bool) string {
	if all {
		return "parked"
	}
	return "events"
}

// parseSubject reads a subject as a person types it: an email address,
// <provider>:<customer id>, or email:<address>.
func parseSubject(s string) (provider.Subject, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "@") && !strings.HasPrefix(s, "email:") {
		s = "email:" + s
	}
	return provider.ParseSubject(s)
}
