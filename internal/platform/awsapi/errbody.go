package awsapi

import (
	"bytes"
	"encoding/json"
)

// errorBody is what the body of a JSON-protocol error answer carries.
type errorBody struct {
	Type     string `json:"__type"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	MessageU string `json:"Message"`
	Item     Item   `json:"Item"`
}

// decodeErrorBody decodes data into an errorBody exactly as
// json.Unmarshal does, errors ignored (a body that is not JSON leaves the
// code to the status). A body as DynamoDB and dynalite write one (no
// space, no escape, the known members only, an Item of scalar values) is
// decoded in one pass by fastErrorBody: a refused claim's body carries
// the stored item, payload and all, and encoding/json scanned it three
// times (validation, the struct, each value) and cost more than the rest
// of the duplicate's work (BenchmarkDecodeRefusedClaim). Anything else
// goes to encoding/json, which FuzzErrorBody holds the fast path to.
func decodeErrorBody(data []byte) errorBody {
	if b, ok := fastErrorBody(data); ok {
		return b
	}
	var b errorBody
	_ = json.Unmarshal(data, &b)
	return b
}

// fastErrorBody decodes the bodies described at decodeErrorBody, or
// answers false. Each member may come once.
func fastErrorBody(data []byte) (errorBody, bool) {
	var b errorBody
	r := jsonReader{b: data}
	if !r.byte('{') {
		return b, false
	}
	if r.byte('}') {
		return b, r.done()
	}
	var seen [5]bool
	for {
		key, ok := r.plainString()
		if !ok || !r.byte(':') {
			return b, false
		}
		var field *string
		n := 0
		switch string(key) {
		case "__type":
			field, n = &b.Type, 0
		case "code":
			field, n = &b.Code, 1
		case "message":
			field, n = &b.Message, 2
		case "Message":
			field, n = &b.MessageU, 3
		case "Item":
			n = 4
		default:
			// Another member, or one of these in other letter case,
			// which encoding/json would match: its rules.
			return b, false
		}
		if seen[n] {
			return b, false
		}
		seen[n] = true
		if field != nil {
			v, ok := r.plainString()
			if !ok {
				return b, false
			}
			*field = string(v)
		} else if b.Item, ok = r.item(); !ok {
			return b, false
		}
		if r.byte('}') {
			return b, r.done()
		}
		if !r.byte(',') {
			return b, false
		}
	}
}

// jsonReader reads JSON without spaces from b at i.
type jsonReader struct {
	b []byte
	i int
}

func (r *jsonReader) done() bool { return r.i == len(r.b) }

// byte consumes c if it comes next.
func (r *jsonReader) byte(c byte) bool {
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// literal returns the next quoted string as it is written, quotes
// included, up to the first quote after the opening one (an escaped quote
// ends it early, which plainString then refuses).
func (r *jsonReader) literal() ([]byte, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(r.b[r.i+1:], '"')
	if end < 0 {
		return nil, false
	}
	lit := r.b[r.i : r.i+end+2]
	r.i += end + 2
	return lit, true
}

// plainString reads a string that needs no unquoting (plainString's
// rules) and returns its contents.
func (r *jsonReader) plainString() ([]byte, bool) {
	lit, ok := r.literal()
	if !ok {
		return nil, false
	}
	return plainString(lit)
}

// item reads an object of scalar attribute values (scalarValue's forms)
// into a new Item, a later value of a name replacing an earlier one as
// with encoding/json.
func (r *jsonReader) item() (Item, bool) {
	if !r.byte('{') {
		return nil, false
	}
	it := make(Item, 16)
	if r.byte('}') {
		return it, true
	}
	for {
		name, ok := r.plainString()
		if !ok || !r.byte(':') {
			return nil, false
		}
		// {"T":"..."} or {"T":true|false}: find its end, then let
		// scalarValue check and decode it.
		start := r.i
		if !r.byte('{') {
			return nil, false
		}
		if _, ok := r.literal(); !ok || !r.byte(':') {
			return nil, false
		}
		switch {
		case r.i < len(r.b) && r.b[r.i] == '"':
			if _, ok := r.literal(); !ok {
				return nil, false
			}
		case bytes.HasPrefix(r.b[r.i:], []byte("true")):
			r.i += len("true")
		case bytes.HasPrefix(r.b[r.i:], []byte("false")):
			r.i += len("false")
		default:
			return nil, false
		}
		if !r.byte('}') {
			return nil, false
		}
		v, ok := scalarValue(r.b[start:r.i])
		if !ok {
			return nil, false
		}
		it[string(name)] = v
		if r.byte('}') {
			return it, true
		}
		if !r.byte(',') {
			return nil, false
		}
	}
}
