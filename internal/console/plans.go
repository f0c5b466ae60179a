package console

import (
	"strings"
	"sync"
	"time"
)

// planTTL is how long a dry run enables its change.
const planTTL = 10 * time.Minute

// maxPlans is the most dry runs waiting for their confirmation.
const maxPlans = 64

// plans remembers the dry runs shown, so that a change runs only as the
// confirmation of a dry run of the very same request: by an id the
// dry-run page carries, and a keyed digest of the request (not the
// request: a subject stays in the page, never in the console).
type plans struct {
	key string
	mu  sync.Mutex
	m   map[string]plan
}

type plan struct {
	digest  string
	expires time.Time
}

func newPlans(token string) *plans {
	return &plans{key: derive(token, "plans"), m: map[string]plan{}}
}

// issue records a dry run of the request fields and returns its id.
func (p *plans) issue(now time.Time, fields ...string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var oldest string
	for id, pl := range p.m {
		if now.After(pl.expires) {
			delete(p.m, id)
		} else if oldest == "" || pl.expires.Before(p.m[oldest].expires) {
			oldest = id
		}
	}
	if len(p.m) >= maxPlans {
		delete(p.m, oldest)
	}
	id := randomID()
	p.m[id] = plan{digest: p.digest(fields), expires: now.Add(planTTL)}
	return id
}

// redeem reports whether id is a dry run of the request fields shown
// less than planTTL ago, and uses it up.
func (p *plans) redeem(now time.Time, id string, fields ...string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl, ok := p.m[id]
	if !ok || now.After(pl.expires) || !equal(pl.digest, p.digest(fields)) {
		return false
	}
	delete(p.m, id)
	return true
}

func (p *plans) digest(fields []string) string {
	return derive(p.key, strings.Join(fields, "\x00"))
}
