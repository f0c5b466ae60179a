package webhook

// Request is one HTTP delivery as a verifier sees it: the method, the
// headers with lower-case names (as API Gateway gives them), the query
// string parameters and the exact raw body. Verifiers read it, never
// change it.
type Request struct {
	Method string
	Header map[string]string
	Query  map[string]string
	Body   []byte
}
