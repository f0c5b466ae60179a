package console

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/replay"
)

// jobTimeout bounds one change: a DLQ replay of its default 100 messages
// takes seconds.
const jobTimeout = 10 * time.Minute

// keptJobs is how many finished changes the console remembers.
const keptJobs = 20

// job is one change, run in the background: its progress, then its
// result.
type job struct {
	id, title, back string
	started         time.Time

	mu      sync.Mutex
	lines   []replay.Line
	summary *replay.Summary
	report  *privacy.Report
	err     string
	ended   time.Time
}

// jobView is what a page shows of a job, read at one moment.
type jobView struct {
	ID, Title, Back string
	Started, Ended  time.Time
	Running         bool
	Lines           []replay.Line
	Summary         *replay.Summary
	Report          *privacy.Report
	Err             string
}

func (j *job) view() jobView {
	j.mu.Lock()
	defer j.mu.Unlock()
	return jobView{ID: j.id, Title: j.title, Back: j.back, Started: j.started, Ended: j.ended, Running: j.ended.IsZero(),
		Lines: slices.Clone(j.lines), Summary: j.summary, Report: j.report, Err: j.err}
}

// progress records one line of a replay as it is known.
func (j *job) progress(l replay.Line) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.lines = append(j.lines, l)
}

// jobs are the changes of this run, newest first.
type jobs struct {
	mu  sync.Mutex
	all []*job
}

func (js *jobs) get(id string) *job {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.all {
		if j.id == id {
			return j
		}
	}
	return nil
}

// recent returns the views of the latest jobs.
func (js *jobs) recent() []jobView {
	js.mu.Lock()
	all := slices.Clone(js.all)
	js.mu.Unlock()
	out := make([]jobView, len(all))
	for i, j := range all {
		out[i] = j.view()
	}
	return out
}

// start runs a change in the background unless one is running, and
// returns its job. The change holds the console's action lock, so the
// console's own DLQ reads wait for it; the DLQ is read afresh after it.
func (s *Server) start(title, back string, run func(ctx context.Context, j *job) error) (*job, error) {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	if len(s.jobs.all) > 0 && s.jobs.all[0].view().Running {
		return nil, errBusy
	}
	j := &job{id: randomID(), title: title, back: back, started: s.now()}
	s.jobs.all = append([]*job{j}, s.jobs.all[:min(len(s.jobs.all), keptJobs-1)]...)
	go func() {
		s.actions.Lock()
		defer s.actions.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
		defer cancel()
		err := run(ctx, j)
		s.dlq.invalidate()
		j.mu.Lock()
		defer j.mu.Unlock()
		if err != nil {
			j.err = err.Error()
			s.logf("%s: %v", title, err)
		}
		j.ended = s.now()
	}()
	return j, nil
}

// jobPage shows a change's progress while it runs (the page refreshes
// itself), then its result.
func (s *Server) jobPage(w http.ResponseWriter, r *http.Request) {
	j := s.jobs.get(r.URL.Query().Get("id"))
	if j == nil {
		s.fail(w, r, http.StatusNotFound, "No such change in this run of the console (the console remembers its last 20).")
		return
	}
	v := j.view()
	refresh := 0
	if v.Running {
		refresh = 1
	}
	s.render(w, r, http.StatusOK, "job", page{Title: v.Title, Nav: "", Refresh: refresh, Body: v})
}
