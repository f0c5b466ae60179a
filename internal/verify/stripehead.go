package verify

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// scanStripeHead is parseStripeEvent's fast path: one pass over body that
// checks it is a JSON object and picks out the fields of stripeEventHead,
// where json.Unmarshal makes two (it validates the whole body, then
// decodes it, skipping the nested data). It answers ok only when the body
// is valid JSON and json.Unmarshal into a stripeEventHead would give the
// same fields without an error; on anything it does not handle plainly
// (escapes in a field or a top-level key, a key that differs from a field
// name only in case, a repeated field, a field of another type or null,
// a number that is not a plain int64, any syntax error, nesting deeper
// than json allows) it answers !ok and the caller decodes with
// encoding/json, whose errors and rules are the reference.
// FuzzStripeHeadMatchesUnmarshal holds it to that.
func scanStripeHead(body []byte) (head stripeEventHead, ok bool) {
	s := headScanner{b: body}
	s.space()
	if !s.byte('{') {
		return head, false
	}
	var seen [5]bool
	s.space()
	if !s.byte('}') {
		for {
			s.space()
			key, ok := s.plainString()
			if !ok {
				return head, false
			}
			s.space()
			if !s.byte(':') {
				return head, false
			}
			s.space()
			field := headField(key)
			if field == -2 {
				return head, false
			}
			if field < 0 {
				if !s.value(1) {
					return head, false
				}
			} else {
				if seen[field] {
					return head, false
				}
				seen[field] = true
				switch field {
				case 0, 1, 2:
					v, ok := s.plainString()
					if !ok {
						return head, false
					}
					switch field {
					case 0:
						head.ID = string(v)
					case 1:
						head.Object = string(v)
					default:
						head.Type = string(v)
					}
				case 3:
					n, ok := s.int64()
					if !ok {
						return head, false
					}
					head.Created = n
				case 4:
					v, ok := s.boolean()
					if !ok {
						return head, false
					}
					head.Livemode = v
				}
			}
			s.space()
			if s.byte('}') {
				break
			}
			if !s.byte(',') {
				return head, false
			}
		}
	}
	s.space()
	return head, s.i == len(s.b)
}

// headFields are stripeEventHead's JSON names, in scanStripeHead's order.
var headFields = [5]string{"id", "object", "type", "created", "livemode"}

// headField returns the index of key among headFields, -1 for another
// key, and -2 for a key json.Unmarshal might still match to a field
// (the same letters in another case, or any byte outside ASCII).
func headField(key []byte) int {
	for i, f := range headFields {
		if string(key) == f {
			return i
		}
	}
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return -2
		}
	}
	for _, f := range headFields {
		if bytes.EqualFold(key, []byte(f)) {
			return -2
		}
	}
	return -1
}

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// headScanner reads JSON from b at i.
type headScanner struct {
	b []byte
	i int
}

func (s *headScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c if it comes next.
func (s *headScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainString reads a string without escapes whose bytes are valid UTF-8
// and returns its contents (json.Unmarshal would decode it to the same).
func (s *headScanner) plainString() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, ascii || utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// str skips any valid string.
func (s *headScanner) str() bool {
	if !s.byte('"') {
		return false
	}
	for s.i < len(s.b) {
		c := s.b[s.i]
		s.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i >= len(s.b) {
				return false
			}
			e := s.b[s.i]
			s.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if s.i+4 > len(s.b) {
					return false
				}
				for _, h := range s.b[s.i : s.i+4] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				s.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// number skips a JSON number and returns its text.
func (s *headScanner) number() ([]byte, bool) {
	start := s.i
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.digits() == 0:
		return nil, false
	}
	if s.byte('.') && s.digits() == 0 {
		return nil, false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if s.digits() == 0 {
			return nil, false
		}
	}
	return s.b[start:s.i], true
}

// digits skips digits and returns how many.
func (s *headScanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// int64 reads a number that is a plain integer within int64.
func (s *headScanner) int64() (int64, bool) {
	text, ok := s.number()
	if !ok || bytes.ContainsAny(text, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	return n, err == nil
}

// boolean reads true or false.
func (s *headScanner) boolean() (bool, bool) {
	switch {
	case s.literal("true"):
		return true, true
	case s.literal("false"):
		return false, true
	}
	return false, false
}

func (s *headScanner) literal(word string) bool {
	if bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		s.i += len(word)
		return true
	}
	return false
}

// value skips any valid value at nesting depth (the top-level object is
// depth 1).
func (s *headScanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '-' || '0' <= c && c <= '9':
		_, ok := s.number()
		return ok
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '{' || c == '[':
		if depth+1 > maxDepth {
			return false
		}
		s.i++
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.space()
		if s.byte(end) {
			return true
		}
		for {
			s.space()
			if c == '{' {
				if !s.str() {
					return false
				}
				s.space()
				if !s.byte(':') {
					return false
				}
				s.space()
			}
			if !s.value(depth + 1) {
				return false
			}
			s.space()
			if s.byte(end) {
				return true
			}
			if !s.byte(',') {
				return false
			}
		}
	}
	return false
}
