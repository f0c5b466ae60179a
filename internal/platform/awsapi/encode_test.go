package awsapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// claimInput is a request like the receiver's claim: a status item of a
// dozen attributes and an inline payload.
func claimInput() *PutItemInput {
	return &PutItemInput{
		TableName: "hookinbox-inbox",
		Item: Item{
			"pk": S("stripe#evt_1QbXq2Lkdfj3Sdfo8Rt2VbNm"), "sk": S("event"),
			"status": S("RECEIVED"), "provider": S("stripe"),
			"event_type": S("checkout.session.completed"), "livemode": Bool(false),
			"created": Int(1764500000), "received_at": S("2026-12-01T03:40:00.123456789Z"),
			"enqueued_at": Int(1764560400123), "payload_sha256": S(strings.Repeat("ab", 32)),
			"expires_at": Int(1767584400), "attempts": Int(0), "pending": S("3"),
			"payload_deflate": B(bytes.Repeat([]byte{0x8f, 0x01, 0xfe}, 300)),
		},
		ConditionExpression:                 "attribute_not_exists(pk)",
		ReturnValuesOnConditionCheckFailure: ReturnAllOld,
	}
}

// BenchmarkEncodeClaim is the JSON encoding of one claim request, which
// the client does once per call: encoding/json's, and the request's own.
func BenchmarkEncodeClaim(b *testing.B) {
	in := claimInput()
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal((*struct{ PutItemInput })(&struct{ PutItemInput }{*in})); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("appendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := in.appendJSON(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// plain returns v as standard Go values that encoding/json writes as the
// JSON protocol's attribute value.
func plain(v AttributeValue) any {
	switch v.Type() {
	case "S":
		s, _ := v.String()
		return map[string]string{"S": s}
	case "N":
		n, _ := v.Number()
		return map[string]string{"N": n}
	case "B":
		b, _ := v.Binary()
		if b == nil {
			b = []byte{}
		}
		return map[string][]byte{"B": b}
	case "BOOL":
		t, _ := v.Boolean()
		return map[string]bool{"BOOL": t}
	case "M":
		m, _ := v.Map()
		return map[string]any{"M": plainItem(m)}
	case "L":
		l, _ := v.List()
		out := []any{}
		for _, e := range l {
			out = append(out, plain(e))
		}
		return map[string]any{"L": out}
	}
	panic("no plain form for " + v.Type())
}

func plainItem(m Item) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = plain(v)
	}
	return out
}

// TestItemEncodesAsEncodingJSON holds the hand-written encoder to
// encoding/json's output, byte for byte, for strings that need escaping
// (quotes, control characters, HTML characters, U+2028, invalid UTF-8).
func TestItemEncodesAsEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", `q"uo\te`, "tab\there\nnl\r\b\f\x00\x1f", "<a href='x'>&amp;</a>",
		"line\u2028sep\u2029", "bad\xffutf8\xc3", "ünïcödé €", strings.Repeat("x", 300)}
	in := Item{"n": Int(-12), "t": Bool(true), "f": Bool(false), "b": B([]byte{0, 1, 2, 250}), "nilb": B(nil),
		"m": M(Item{"z": S("y"), "a": L(S("z"), Int(1))}), "em": M(nil), "el": L()}
	for i, s := range strs {
		in[s+string(rune('a'+i))] = S(s)
	}
	got, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(plainItem(in))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("encoded item:\n got %s\nwant %s", got, want)
	}
	got, _ = json.Marshal(claimInput())
	var back PutItemInput
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(&back)
	if !bytes.Equal(got, again) {
		t.Errorf("claim round trip:\n got %s\nwant %s", again, got)
	}
}

// TestAppendersWriteWhatEncodingJSONWrites holds each request's own
// encoder to encoding/json's output for the same request, byte for byte,
// with every field set and with only the required ones.
func TestAppendersWriteWhatEncodingJSONWrites(t *testing.T) {
	item := Item{"pk": S("stripe#evt_<1>"), "sk": S("event"), "n": Int(3), "b": B([]byte("raw\x00")), "t": Bool(true)}
	names := map[string]string{"#s": "status", "#a": "a\"b"}
	attrs := map[string]MessageAttributeValue{"event_type": {DataType: "String", StringValue: "checkout.session.completed"},
		"bin": {DataType: "Binary", BinaryValue: []byte{1, 2, 3}}, "n": {DataType: "Number", StringValue: "2"}}
	type plainPut PutItemInput
	type plainUpdate UpdateItemInput
	type plainSend SendMessageInput
	for _, tc := range []struct {
		name string
		a    appender
		v    any
	}{
		{"put, all fields", &PutItemInput{TableName: "t", Item: item, ConditionExpression: "attribute_not_exists(pk)", ExpressionAttributeNames: names,
			ExpressionAttributeValues: Item{":x": S("y")}, ReturnValues: ReturnAllOld, ReturnValuesOnConditionCheckFailure: ReturnAllOld, ReturnConsumedCapacity: ReturnCapacityTotal}, nil},
		{"put, required fields", &PutItemInput{TableName: "t", Item: item}, nil},
		{"put, nil item", &PutItemInput{TableName: "t"}, nil},
		{"update, all fields", &UpdateItemInput{TableName: "t", Key: item, UpdateExpression: "SET #s = :x", ConditionExpression: "attribute_exists(pk)", ExpressionAttributeNames: names,
			ExpressionAttributeValues: Item{":x": S("y"), ":m": M(Item{"a": L(S("b"))})}, ReturnValues: ReturnAllNew, ReturnValuesOnConditionCheckFailure: ReturnAllOld, ReturnConsumedCapacity: ReturnCapacityTotal}, nil},
		{"update, required fields", &UpdateItemInput{TableName: "t", Key: item}, nil},
		{"send, all fields", &SendMessageInput{QueueUrl: "http://127.0.0.1/q", MessageBody: `{"key":"stripe#evt_1"}`, DelaySeconds: 7, MessageAttributes: attrs, MessageSystemAttributes: attrs}, nil},
		{"send, required fields", &SendMessageInput{QueueUrl: "q", MessageBody: ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.a.appendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			switch in := tc.a.(type) {
			case *PutItemInput:
				v = (*plainPut)(in)
			case *UpdateItemInput:
				v = (*plainUpdate)(in)
			case *SendMessageInput:
				v = (*plainSend)(in)
			}
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("appendJSON:\n got %s\nwant %s", got, want)
			}
		})
	}
}
